// API records made from CUPTI's callbacks in a detached tracer's windows (api_call_recorder.hpp),
// without a GPU: calls entered and left in memory, as the callback would report them.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "tracer/activity_decoder.hpp"
#include "tracer/api_call_recorder.hpp"

namespace kernscope::tracer {
namespace {

// One call as the callback sees it: entry at `start`, exit at `end`.
void call(ApiCallRecorder& r, bool driver, std::uint32_t cbid, std::uint32_t correlation, std::int64_t start, std::int64_t end,
          std::uint32_t tid = 7) {
  const std::uint64_t slot = ApiCallRecorder::entered(start);
  r.exited(driver, cbid, correlation, slot, end, 42, tid, 0);
}

TEST(ApiCallRecorder, ACallInsideAWindowBecomesTheRecordCuptiWouldHaveMade) {
  ApiCallRecorder recorder(100);
  recorder.open(1000);
  const std::uint64_t slot = ApiCallRecorder::entered(1500);
  recorder.exited(false, 211, 9, slot, 1800, 42, 77, 2);
  call(recorder, true, 307, 10, 1600, 1700);
  std::vector<CUpti_ActivityAPI> records;
  ASSERT_EQ(recorder.take(records), 2u);
  ASSERT_EQ(records.size(), 2u);
  const auto& r = records[0];
  EXPECT_EQ(r.kind, CUPTI_ACTIVITY_KIND_RUNTIME);
  EXPECT_EQ(r.cbid, 211u);
  EXPECT_EQ(r.start, 1500u);
  EXPECT_EQ(r.end, 1800u);
  EXPECT_EQ(r.processId, 42u);
  EXPECT_EQ(r.threadId, 77u);
  EXPECT_EQ(r.correlationId, 9u);
  EXPECT_EQ(r.returnValue, 2u);
  EXPECT_EQ(records[1].kind, CUPTI_ACTIVITY_KIND_DRIVER);
  EXPECT_TRUE(recorder.empty());
  EXPECT_EQ(recorder.take(records), 0u);  // taken once
}

TEST(ApiCallRecorder, CallsTheWindowCutOrThatCameBeforeItAreNotRecorded) {
  ApiCallRecorder recorder(100);
  call(recorder, false, 211, 1, 100, 200);  // no window yet
  recorder.open(1000);
  call(recorder, false, 211, 2, 900, 1100);  // entered before the window opened
  recorder.exited(false, 211, 3, 0, 1200, 42, 7, 0);  // a slot no entry of ours filled
  recorder.exited(false, 211, 4, 1100, 1200, 42, 7, 0);  // nor this (no entry mark)
  call(recorder, false, 211, 5, 1300, 1250);  // an exit before its entry: not a call of this window
  call(recorder, false, 211, 6, 1300, 1400);  // the one whole call
  recorder.close();
  call(recorder, false, 211, 7, 1500, 1600);  // after the close
  recorder.open(2000);
  call(recorder, false, 211, 8, 1500, 2100);  // entered in the last window, left in this one
  std::vector<CUpti_ActivityAPI> records;
  recorder.take(records);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].correlationId, 6u);
}

TEST(ApiCallRecorder, DriverCallsMadeInsideARuntimeCallAreLeftOutAsCuptisRecordsLeaveThemOut) {
  ApiCallRecorder recorder(100);
  recorder.open(0);
  // cudaLaunchKernel (correlation 5) and the cuLaunchKernel it makes, which comes with its id.
  ApiCallRecorder::runtime_call_entered(5);
  const std::uint64_t runtime_slot = ApiCallRecorder::entered(10);
  call(recorder, true, 307, 5, 12, 18);
  recorder.exited(false, 211, 5, runtime_slot, 20, 42, 7, 0);
  // A driver call of the program's own (Triton's cuLaunchKernel), after the runtime call left.
  call(recorder, true, 307, 6, 30, 40);
  std::vector<CUpti_ActivityAPI> records;
  recorder.take(records);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].kind, CUPTI_ACTIVITY_KIND_RUNTIME);
  EXPECT_EQ(records[0].correlationId, 5u);
  EXPECT_EQ(records[1].kind, CUPTI_ACTIVITY_KIND_DRIVER);
  EXPECT_EQ(records[1].correlationId, 6u);
}

TEST(ApiCallRecorder, RecordsOfEveryThreadAreTaken) {
  ApiCallRecorder recorder(1000);
  recorder.open(0);
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&recorder, t] {
      for (std::uint32_t i = 0; i < 100; ++i) call(recorder, false, 211, t * 1000 + i + 1, 10 + i, 20 + i, 100 + t);
    });
  }
  for (auto& t : threads) t.join();
  std::vector<CUpti_ActivityAPI> records;
  EXPECT_EQ(recorder.take(records), 400u);
  EXPECT_EQ(recorder.dropped(), 0u);
  std::set<std::uint32_t> correlations, tids;
  for (const auto& r : records) {
    correlations.insert(r.correlationId);
    tids.insert(r.threadId);
  }
  EXPECT_EQ(correlations.size(), 400u);  // none twice
  EXPECT_EQ(tids.size(), 4u);  // each thread's own buffer reached the take
}

TEST(ApiCallRecorder, BeyondItsBoundCallsAreCountedAsDroppedUntilTheRecordsAreTaken) {
  ApiCallRecorder recorder(3);
  recorder.open(0);
  for (std::uint32_t i = 1; i <= 5; ++i) call(recorder, false, 211, i, 10, 20);
  EXPECT_EQ(recorder.dropped(), 2u);
  std::vector<CUpti_ActivityAPI> records;
  EXPECT_EQ(recorder.take(records), 3u);
  EXPECT_EQ(records.back().correlationId, 3u);  // the first three kept
  call(recorder, false, 211, 6, 30, 40);  // room again once taken
  EXPECT_EQ(recorder.take(records), 1u);
  EXPECT_EQ(recorder.dropped(), 2u);
}

TEST(ApiCallRecorder, ItsRecordsDecodeAsCuptisAndPairWithTheirKernelsAcrossAttachments) {
  StringPool strings;
  ActivityDecoder decoder(strings, [](bool driver, std::uint32_t cbid) {
    return std::string(driver ? "cu" : "cuda") + std::to_string(cbid);
  });
  ApiCallRecorder recorder(100);
  RecordBatch batch;
  for (int window = 0; window < 2; ++window) {
    if (window == 1) decoder.new_epoch();  // CUPTI attached anew: its correlation ids start at 1 again
    recorder.open(window * 10'000);
    call(recorder, false, 211, 1, window * 10'000 + 10, window * 10'000 + 20);
    CUpti_ActivityKernel10 kernel{};
    kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    kernel.correlationId = 1;
    kernel.name = "k";
    kernel.start = static_cast<std::uint64_t>(window * 10'000 + 30);
    kernel.end = kernel.start + 5;
    decoder.decode(reinterpret_cast<CUpti_Activity*>(&kernel), batch);
    std::vector<CUpti_ActivityAPI> records;
    recorder.take(records);
    for (auto& r : records) decoder.decode(reinterpret_cast<CUpti_Activity*>(&r), batch);
    recorder.close();
  }
  ASSERT_EQ(batch.api_calls.size(), 2u);
  ASSERT_EQ(batch.kernels.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(batch.api_calls[i].correlation, batch.kernels[i].correlation);
    EXPECT_EQ(strings.get(batch.api_calls[i].name), "cuda211");
    EXPECT_FALSE(batch.api_calls[i].driver);
    EXPECT_EQ(batch.api_calls[i].pid, 42u);
  }
  EXPECT_NE(batch.api_calls[0].correlation, batch.api_calls[1].correlation);
}

}  // namespace
}  // namespace kernscope::tracer
