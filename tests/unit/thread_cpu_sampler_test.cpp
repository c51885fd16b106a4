// The thread CPU sampler (thread_cpu_sampler.hpp) driven by hand, on the test's own threads, and
// its rows written and read back as a trace.
#include <gtest/gtest.h>

#include <ctime>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "kernscope/open.hpp"
#include "tracer/thread_cpu_sampler.hpp"
#include "tracer/trace_db_writer.hpp"

namespace kernscope::tracer {
namespace {

// Ticks 1,000 ns apart; thread 7 uses 900 ns of each tick from tick 2 to tick 5 and 100 ns of
// the others: idle [0,2000), busy [2000,5000), idle from 5000.
TEST(ThreadCpuSampler, TicksMergeIntoBusyAndIdleStretches) {
  std::int64_t now = 0, cpu = 0;
  ThreadCpuSampler sampler([&] { return now; }, [&](std::uint32_t tid) { return tid == 7 ? cpu : -1; }, 0);
  sampler.watch(7);
  sampler.watch(7);  // watched once
  for (int tick = 0; tick <= 8; ++tick) {
    now = tick * 1000;
    sampler.sample_once();
    cpu += tick >= 2 && tick < 5 ? 900 : 100;
  }
  sampler.stop();
  std::vector<ThreadCpuRow> rows;
  sampler.drain(rows);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].tid, 7u);
  EXPECT_EQ(rows[0].start, 0);
  EXPECT_EQ(rows[0].end, 2000);
  EXPECT_EQ(rows[0].busy, 0);
  EXPECT_EQ(rows[0].cpu_ns, 200);
  EXPECT_EQ(rows[1].start, 2000);
  EXPECT_EQ(rows[1].end, 5000);
  EXPECT_EQ(rows[1].busy, 1);
  EXPECT_EQ(rows[1].cpu_ns, 2700);
  EXPECT_EQ(rows[2].start, 5000);
  EXPECT_EQ(rows[2].end, 8000);
  EXPECT_EQ(rows[2].busy, 0);
}

// A pause closes the stretch (none spans it) and a thread that ended closes its own; the thread
// that did not exist (clock -1) gives none.
TEST(ThreadCpuSampler, PausesAndEndedThreadsCloseTheirStretch) {
  std::int64_t now = 0, cpu = 0;
  bool alive = true;
  ThreadCpuSampler sampler([&] { return now; }, [&](std::uint32_t tid) { return tid == 1 && alive ? cpu : -1; }, 0);
  sampler.watch(1);
  sampler.watch(2);
  auto tick = [&](std::int64_t t, std::int64_t used) {
    now = t;
    sampler.sample_once();
    cpu += used;
  };
  tick(0, 1000);
  tick(1000, 1000);
  tick(2000, 1000);  // busy [0,2000) open
  sampler.set_active(false);
  now = 10'000;
  sampler.set_active(true);
  tick(10'000, 1000);
  tick(11'000, 0);  // busy [10000,11000)
  alive = false;
  tick(12'000, 0);  // thread 1 ended: [10000,11000) closed
  std::vector<ThreadCpuRow> rows;
  sampler.drain(rows);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].start, 0);
  EXPECT_EQ(rows[0].end, 2000);
  EXPECT_EQ(rows[1].start, 10'000);
  EXPECT_EQ(rows[1].end, 11'000);
  for (const auto& r : rows) EXPECT_EQ(r.tid, 1u);
}

// The real clock: a thread that spins is busy, one that sleeps is not, read from another thread.
// The worker spins until its own CPU clock (CLOCK_THREAD_CPUTIME_ID, read inside it) has advanced
// 30 ms, not for a wall time: on a loaded machine a 60 ms wall spin got 17 ms of CPU and failed.
TEST(ThreadCpuSampler, ReadsAnotherThreadsCpuClock) {
  std::atomic<std::uint32_t> tid{0};
  std::atomic<bool> go{false}, spin{true}, done{false};
  auto own_cpu_ns = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  std::thread worker([&] {
    tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::int64_t from = own_cpu_ns();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (own_cpu_ns() - from < 30'000'000 && std::chrono::steady_clock::now() < give_up) {
    }
    spin = false;
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::yield();
  const std::int64_t a = ThreadCpuSampler::thread_cpu_ns(tid);
  go = true;
  while (spin) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::int64_t b = ThreadCpuSampler::thread_cpu_ns(tid);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::int64_t c = ThreadCpuSampler::thread_cpu_ns(tid);
  done = true;
  worker.join();
  ASSERT_GE(a, 0);
  EXPECT_GE(b - a, 30'000'000) << "the sampler read less CPU than the spinning thread's own clock says it used";
  EXPECT_LT(c - b, 5'000'000) << "the sleeping thread used CPU";
  EXPECT_EQ(ThreadCpuSampler::thread_cpu_ns(0x7ffffff0), -1);  // no such thread
}

TEST(ThreadCpuSampler, RowsReadBackAsTheTracesThreadCpu) {
  const auto path = (std::filesystem::temp_directory_path() / ("ks_thread_cpu_" + std::to_string(getpid()) + ".sqlite")).string();
  std::filesystem::remove(path);
  StringPool strings;
  RecordBatch batch;
  batch.thread_cpu.push_back(ThreadCpuRow{4243, 1000, 5000, 3900, 1});
  batch.thread_cpu.push_back(ThreadCpuRow{4243, 5000, 9000, 10, 0});
  auto writer = TraceDbWriter::create(path, 4242);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  ASSERT_TRUE((*writer)->append(batch, strings).has_value());
  ASSERT_TRUE((*writer)->finish({{"tracer", "kernscope 0.1.0"}}, "python3", {{4243, "MainThread"}}, strings).has_value());
  writer->reset();
  auto trace = open_trace(path);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  const auto& c = trace->thread_cpu;
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.global_tid[0], (std::int64_t{4242} << 24) | 4243);
  EXPECT_EQ(c.start_ns[0], 1000);
  EXPECT_EQ(c.end_ns[0], 5000);
  EXPECT_EQ(c.cpu_ns[0], 3900);
  EXPECT_EQ(c.busy[0], 1);
  EXPECT_EQ(c.busy[1], 0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kernscope::tracer
