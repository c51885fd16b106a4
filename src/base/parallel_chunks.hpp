// Splits rows [0, n) into contiguous chunks and runs one function per chunk on its own thread
// (the caller's thread takes the first), for analyses whose passes over millions of rows add up
// per-chunk tallies that are merged afterwards. Why: on a 16-core host the reader loads a 1 GB
// export in parallel in ~1.2 s, and a single-threaded pass over its 13 M API calls then held
// `report` (bench/RESULTS.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <thread>
#include <vector>

namespace kernscope {

class ChunkPlan {
 public:
  // At least `min_rows` rows a chunk, at most one chunk per hardware thread (or per `cores`, where
  // given: tests ask for several chunks on a one-core runner) and at most `max_chunks` (0: no
  // further limit).
  ChunkPlan(std::size_t n, std::size_t min_rows, std::size_t max_chunks = 0, std::size_t cores = 0) : n_(n) {
    std::size_t chunks = cores ? cores : std::max(1u, std::thread::hardware_concurrency());
    if (max_chunks) chunks = std::min(chunks, max_chunks);
    count_ = std::max<std::size_t>(1, std::min(chunks, n / std::max<std::size_t>(1, min_rows)));
    workers_ = count_;
  }
  // Chunks of uneven cost (steps: a prefill holds many times a decode step's work; a core shared
  // with other analyses runs its chunk slower): up to `pieces` chunks per core, taken in turn by one
  // thread per core as each finishes its last, so no core idles while another still has several.
  // For passes that keep nothing per chunk (each item writes its own result).
  static ChunkPlan balanced(std::size_t n, std::size_t min_rows, std::size_t pieces = 8) {
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    ChunkPlan plan(n, min_rows, 0, cores * pieces);
    plan.workers_ = std::min(plan.count_, cores);
    return plan;
  }
  std::size_t count() const { return count_; }
  std::size_t begin(std::size_t chunk) const { return n_ * chunk / count_; }
  std::size_t end(std::size_t chunk) const { return n_ * (chunk + 1) / count_; }

  // Calls fn(chunk, begin, end) for every chunk, concurrently; returns when all have returned. An
  // exception of any chunk is rethrown here (after every chunk has finished; a worker whose chunk
  // threw takes no further chunks).
  template <class F>
  void run(F&& fn) const {
    std::atomic<std::size_t> next{0};
    auto work = [&fn, &next, this] {
      for (std::size_t c = next++; c < count_; c = next++) fn(c, begin(c), end(c));
    };
    std::vector<std::future<void>> others;
    for (std::size_t w = 1; w < workers_; ++w) others.push_back(std::async(std::launch::async, work));
    std::exception_ptr first_error;
    try {
      work();
    } catch (...) {
      first_error = std::current_exception();
    }
    for (auto& f : others) {
      try {
        f.get();
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    }
    if (first_error) std::rethrow_exception(first_error);
  }

 private:
  std::size_t n_;
  std::size_t count_ = 1;
  std::size_t workers_ = 1;  // threads running the chunks (the caller's among them)
};

// The items `each(begin, end, emit)` emits for the rows of every chunk of `plan`, in row order,
// gathered on several threads: each chunk counts its items, then writes them at its offset after the
// earlier chunks' (one allocation at the final size: millions of kernels or calls).
template <class T, class Each>
std::vector<T> gather_in_chunks(const ChunkPlan& plan, Each&& each) {
  std::vector<std::size_t> offset(plan.count() + 1, 0);
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) { each(begin, end, [&](const T&) { ++offset[c + 1]; }); });
  for (std::size_t c = 0; c < plan.count(); ++c) offset[c + 1] += offset[c];
  std::vector<T> out(offset.back());
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) {
    std::size_t at = offset[c];
    each(begin, end, [&](const T& item) { out[at++] = item; });
  });
  return out;
}

// Whether positions [begin, end) each come no earlier than the one before them (`earlier(p, q)`: p
// comes before q), position `begin` checked against `begin - 1`: chunks that all pass make the whole
// in order. For callers that check the order inside a pass of their own over the chunks.
template <class Earlier>
bool in_order_from(std::size_t begin, std::size_t end, Earlier&& earlier) {
  for (std::size_t p = std::max<std::size_t>(begin, 1); p < end; ++p) {
    if (earlier(p, p - 1)) return false;
  }
  return true;
}

// Whether positions [0, n) are in order (see in_order_from), checked in chunks of at least
// `min_rows` on several threads: exports list rows in start order, so most callers only check.
template <class Earlier>
bool in_order_in_chunks(std::size_t n, std::size_t min_rows, Earlier&& earlier) {
  const ChunkPlan plan(n, min_rows);
  std::vector<char> in_order(plan.count(), 1);
  plan.run([&](std::size_t c, std::size_t begin, std::size_t end) { in_order[c] = in_order_from(begin, end, earlier); });
  return std::find(in_order.begin(), in_order.end(), 0) == in_order.end();
}

}  // namespace kernscope
