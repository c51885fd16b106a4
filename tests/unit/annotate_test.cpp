// kernscope/annotate.h: the step profiler starts and stops around the chosen iterations, and the
// NVTX ranges push and pop what they say, seen by a fake NVTX tool linked in statically.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "kernscope/annotate.h"

namespace {

// A fake NVTX tool through NVTX's static-injection hook (nvtxDetail/nvtxInit.h): when the weak
// pointer InitializeInjectionNvtx2_fnptr is set at the first NVTX call, NVTX calls it and then routes
// the hooked calls to these functions, which log them. Without a tool, NVTX calls go nowhere and a
// range could not be checked.
std::vector<std::string> nvtx_log;
std::deque<std::string> domain_names;  // a domain handle is the address of its name here

int fake_range_push(const char* message) {
  nvtx_log.push_back(std::string("push ") + message);
  return 0;
}
int fake_range_pop() {
  nvtx_log.push_back("pop");
  return 0;
}
nvtxDomainHandle_t fake_domain_create(const char* name) {
  domain_names.emplace_back(name);
  return reinterpret_cast<nvtxDomainHandle_t>(&domain_names.back());
}
const std::string& domain_name(nvtxDomainHandle_t domain) { return *reinterpret_cast<const std::string*>(domain); }
int fake_domain_range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const std::string message = attributes->messageType == NVTX_MESSAGE_TYPE_ASCII ? attributes->message.ascii : "<not ascii>";
  nvtx_log.push_back("push " + domain_name(domain) + ":" + message);
  return 0;
}
int fake_domain_range_pop(nvtxDomainHandle_t domain) {
  nvtx_log.push_back("pop " + domain_name(domain));
  return 0;
}

template <class F>
void hook(NvtxFunctionTable table, unsigned size, unsigned id, F* f) {
  if (id <= size) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

int fake_nvtx_init(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size)) {
    return 0;
  }
  hook(core, core_size, NVTX_CBID_CORE_RangePushA, fake_range_push);
  hook(core, core_size, NVTX_CBID_CORE_RangePop, fake_range_pop);
  hook(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, fake_domain_create);
  hook(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, fake_domain_range_push);
  hook(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, fake_domain_range_pop);
  return 1;
}


std::string calls;
struct FakeProfiler {
  static void start() { calls += "S"; }
  static void stop() { calls += "E"; }
};

TEST(Annotate, StepProfilerWrapsTheChosenIterations) {
  unsetenv("KERNSCOPE_PROFILE_START_STOP");
  calls.clear();
  {
    kernscope::BasicStepProfiler<FakeProfiler> steps(2, 3);
    std::string trace;
    for (int i = 0; i < 6; ++i) {
      steps.step();
      trace += steps.active() ? '1' : '0';
    }
    EXPECT_EQ(trace, "001100");
  }
  EXPECT_EQ(calls, "SE");
  setenv("KERNSCOPE_PROFILE_START_STOP", "0-0,4-9", 1);
  calls.clear();
  {
    kernscope::BasicStepProfiler<FakeProfiler> steps(2, 3);
    for (int i = 0; i < 6; ++i) steps.step();
  }  // the loop ended inside 4-9: the destructor stops
  EXPECT_EQ(calls, "SESE");
  unsetenv("KERNSCOPE_PROFILE_START_STOP");
}

TEST(Annotate, ParsesIterationSpans) {
  std::vector<std::pair<long, long>> spans;
  EXPECT_TRUE(kernscope::parse_iterations("3-5,7", spans));
  EXPECT_EQ(spans, (std::vector<std::pair<long, long>>{{3, 5}, {7, 7}}));
  for (const char* bad : {"", "x", "5-2", "-1", "3-", "1-2x"}) EXPECT_FALSE(kernscope::parse_iterations(bad, spans)) << bad;
}

TEST(Annotate, RangesPushTheirNameAndPopAtTheEndOfTheScope) {
  unsetenv("NVTX_INJECTION64_PATH");  // a tool named there would be loaded instead of the fake
  InitializeInjectionNvtx2_fnptr = fake_nvtx_init;  // before the process's first NVTX call
  nvtx_log.clear();
  {
    KERNSCOPE_RANGE("decode_step");
    nvtx_log.push_back("body");
    {
      kernscope::ScopedRange r("attention", "engine");
      nvtx_log.push_back("inner body");
    }
  }
  EXPECT_EQ(nvtx_log, (std::vector<std::string>{"push decode_step", "body", "push engine:attention", "inner body",
                                                "pop engine", "pop"}));
}

}  // namespace
