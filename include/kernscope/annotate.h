/* kernscope/annotate.h: annotations for C and C++ programs traced by `kernscope record` (or nsys).
 *
 *   KERNSCOPE_RANGE("decode_step");            // C++: an NVTX range for the enclosing scope
 *   kernscope::ScopedRange r("attention", "engine");
 *   kernscope::StepProfiler steps(10, 20);     // profile iterations 10..20 (inclusive)
 *   for (...) { steps.step(); ... }            // cudaProfilerStart before 10, Stop after 20
 *
 * With `kernscope record --capture-range cudaProfilerApi` only those iterations are recorded.
 * KERNSCOPE_PROFILE_START_STOP=A-B[,C-D] in the environment overrides the iterations.
 * Header-only: NVTX v3 (header-only) and the CUDA runtime's cudaProfilerStart/Stop. */
#ifndef KERNSCOPE_ANNOTATE_H
#define KERNSCOPE_ANNOTATE_H

#include <nvtx3/nvToolsExt.h>

#ifdef __cplusplus
#include <cuda_profiler_api.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace kernscope {

/* An NVTX push/pop range for a scope, in the default domain or a named one. */
class ScopedRange {
 public:
  explicit ScopedRange(const char* name, const char* domain = nullptr) {
    if (domain) {
      domain_ = nvtxDomainCreateA(domain);
      nvtxEventAttributes_t attributes = {};
      attributes.version = NVTX_VERSION;
      attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
      attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
      attributes.message.ascii = name;
      nvtxDomainRangePushEx(domain_, &attributes);
    } else {
      nvtxRangePushA(name);
    }
  }
  ~ScopedRange() {
    if (domain_) nvtxDomainRangePop(domain_);
    else nvtxRangePop();
  }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  nvtxDomainHandle_t domain_ = nullptr;
};

/* "A-B[,C-D]" (or "A") -> inclusive spans; false when the text is not that. */
inline bool parse_iterations(const char* text, std::vector<std::pair<long, long>>& spans) {
  spans.clear();
  std::string s = text ? text : "";
  std::size_t begin = 0;
  while (begin <= s.size()) {
    std::size_t end = s.find(',', begin);
    if (end == std::string::npos) end = s.size();
    const std::string part = s.substr(begin, end - begin);
    if (!part.empty()) {
      char* rest = nullptr;
      const long a = std::strtol(part.c_str(), &rest, 10);
      if (rest == part.c_str() || a < 0) return false;
      long b = a;
      if (*rest == '-') {
        const char* second = rest + 1;
        b = std::strtol(second, &rest, 10);
        if (rest == second) return false;
      }
      if (*rest != '\0' || b < a) return false;
      spans.emplace_back(a, b);
    }
    begin = end + 1;
  }
  return !spans.empty();
}

/* Calls start() before the first iteration of each span and stop() after its last. `Profiler`
 * is the CUDA profiler API by default; tests pass their own. */
struct CudaProfilerApi {
  static void start() { cudaProfilerStart(); }
  static void stop() { cudaProfilerStop(); }
};

template <class Profiler = CudaProfilerApi>
class BasicStepProfiler {
 public:
  BasicStepProfiler(long first, long last) {
    if (!parse_iterations(std::getenv("KERNSCOPE_PROFILE_START_STOP"), spans_)) spans_ = {{first, last}};
  }
  ~BasicStepProfiler() { close(); }
  BasicStepProfiler(const BasicStepProfiler&) = delete;
  BasicStepProfiler& operator=(const BasicStepProfiler&) = delete;

  /* Marks the start of the next iteration; returns its number (0, 1, ...). */
  long step() {
    const long i = ++iteration_;
    const bool inside = in_span(i);
    if (active_ && !inside) {
      Profiler::stop();
      active_ = false;
    }
    if (!active_ && inside) {
      Profiler::start();
      active_ = true;
    }
    return i;
  }
  /* Stops the profiler when the loop ends inside a span. */
  void close() {
    if (active_) {
      Profiler::stop();
      active_ = false;
    }
  }
  bool active() const { return active_; }
  const std::vector<std::pair<long, long>>& spans() const { return spans_; }

 private:
  bool in_span(long i) const {
    for (const auto& s : spans_) {
      if (i >= s.first && i <= s.second) return true;
    }
    return false;
  }
  std::vector<std::pair<long, long>> spans_;
  long iteration_ = -1;
  bool active_ = false;
};
using StepProfiler = BasicStepProfiler<>;

}  // namespace kernscope

#define KERNSCOPE_CONCAT_INNER(a, b) a##b
#define KERNSCOPE_CONCAT(a, b) KERNSCOPE_CONCAT_INNER(a, b)
#define KERNSCOPE_RANGE(name) ::kernscope::ScopedRange KERNSCOPE_CONCAT(kernscope_range_, __LINE__)(name)

#else /* C */
static inline void kernscope_range_push(const char* name) { nvtxRangePushA(name); }
static inline void kernscope_range_pop(void) { nvtxRangePop(); }
#endif

#endif /* KERNSCOPE_ANNOTATE_H */
