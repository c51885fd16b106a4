// Where steps come from (analyses/steps/step_windows.hpp). Annotation names: what engines and PyTorch
// call their steps, against names that only contain such a word (from the public traces in the
// issue: nvFuser's resolveForwardedInputs, FSDP's pre_forward/post_forward, flash-attn's forward
// call). Without annotations: our Llama fixtures' NVTX ranges are the truth (e.g. 2 prefill and 128
// decode steps as its workload issued them; nvtx_pushpop_sum gold counts them), and the same
// trace read without its NVTX rows must give the same steps as forward passes (an embedding lookup
// through an argmax each).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analyses/steps/step_windows.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "kernscope/steps.hpp"
#include "model/trace_filter.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

using report::step_annotation;

TEST(StepAnnotations, StepNamesAreWholeWords) {
  struct Case {
    const char* text;
    bool step;
    Phase phase;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"decode_step", true, Phase::kDecode},
           {"measure:decode_step", true, Phase::kDecode},
           {"prefill", true, Phase::kPrefill},
           {"ProfilerStep#12", true, Phase::kUnknown},
           {"step 7", true, Phase::kUnknown},
           {"forward", true, Phase::kUnknown},
           {"execute_model", true, Phase::kUnknown},
           {"execute_512_context_1(512)_generation_0(0)", true, Phase::kPrefill},
           {"execute_4_context_0(0)_generation_4(4)", true, Phase::kDecode},
           {"execute_260_context_1(256)_generation_4(4)", true, Phase::kMixed},
           // the older spelling, without the scheduled tokens (the eager prefill the issue reports)
           {"execute_context_1(888_788544)_generation_0(0)", true, Phase::kPrefill},
           {"execute_context_0(0)_generation_8(8)", true, Phase::kDecode},
           {"_forward_step 12: 0 ctx reqs, 8 gen reqs", true, Phase::kDecode},
           {"_forward_step 3: 1 ctx reqs, 7 gen reqs", true, Phase::kMixed},
           {"resolveForwardedInputs", false, Phase::kUnknown},
           {"FullyShardedDataParallel.pre_forward", false, Phase::kUnknown},
           {"post_forward", false, Phase::kUnknown},
           {"_flash_attn_forward", false, Phase::kUnknown},
           {"aten::linear", false, Phase::kUnknown},
           {"stepwise_reduce", false, Phase::kUnknown},
           // SGLang's ModelRunner.forward span (_build_step_span_name): step[<ForwardMode> bs=..].
           {"step[EXTEND bs=15 toks=15360]", true, Phase::kPrefill},
           {"step[DECODE bs=32]", true, Phase::kDecode},
           {"step[DECODE smc-head-graph bs=4 toks=8]", true, Phase::kDecode},
           {"step[MIXED bs=8]", true, Phase::kMixed},
           {"step[SPLIT_PREFILL bs=2]", true, Phase::kPrefill},
           {"step[TARGET_VERIFY bs=4]", true, Phase::kUnknown},
           {"step[idle]", false, Phase::kUnknown},
           {"substep[DECODE bs=2]", false, Phase::kUnknown},
       }) {
    const auto a = step_annotation(c.text);
    EXPECT_EQ(a.has_value(), c.step) << c.text;
    if (a) {
      EXPECT_EQ(a->phase, c.phase) << c.text;
    }
  }
}

std::vector<std::int64_t> kernels_per_step(const StepAnalysis& s, Phase phase) {
  std::vector<std::int64_t> out;
  for (const auto& st : s.steps) {
    if (st.phase == phase) out.push_back(st.kernels);
  }
  return out;
}

// Our own Llama traces: the plain one (2 prefill + 128 decode ranges), the emit_nvtx one (2 + 32)
// and the Python-sampled one (1 + 64), counted with sqlite3 over NVTX_EVENTS.
class NvtxRemoved : public ::testing::TestWithParam<std::tuple<const char*, std::size_t, std::size_t>> {};

TEST_P(NvtxRemoved, TheForwardPassesGiveTheAnnotatedSteps) {
  const auto [fixture, prefills, decodes] = GetParam();
  const std::string path = (testing::fixtures_dir() / "nsys" / fixture / "trace.sqlite.xz").string();
  auto annotated_trace = open_trace(path);
  ASSERT_TRUE(annotated_trace);
  OpenOptions no_nvtx;
  no_nvtx.kinds = kAllEventKinds & ~bit(EventKind::kNvtx);
  auto bare_trace = open_trace(path, no_nvtx);
  ASSERT_TRUE(bare_trace);
  ASSERT_EQ(bare_trace->nvtx.size(), 0u);
  const auto annotated = analyze_steps(*annotated_trace, OpRuleSet::builtin(), {}).value();
  const auto bare = analyze_steps(*bare_trace, OpRuleSet::builtin(), {}).value();
  // The workload's forward passes (one embedding lookup and one argmax each) are its steps.
  EXPECT_NE(bare.method.find("forward passes"), std::string::npos) << bare.method;
  for (Phase phase : {Phase::kPrefill, Phase::kDecode}) {
    auto want = kernels_per_step(annotated, phase);
    auto got = kernels_per_step(bare, phase);
    ASSERT_EQ(got.size(), want.size()) << phase_name(phase);
    ASSERT_EQ(want.size(), phase == Phase::kPrefill ? prefills : decodes);
    // A pass starts at its embedding lookup; the workload's range may open a little before or after
    // it, so a request's first pass (its set-up joins it) may differ by a few kernels, and the very
    // last step, which has no next step to end it, may lose its last few. The rest are exact.
    ASSERT_FALSE(want.empty());
    const std::size_t last = want.size() - 1;
    for (std::size_t i = 0; i < last; ++i) {
      if (phase == Phase::kPrefill) {
        EXPECT_LE(std::abs(got[i] - want[i]), 4) << phase_name(phase) << " step " << i;
      } else {
        EXPECT_EQ(got[i], want[i]) << phase_name(phase) << " step " << i;
      }
    }
    EXPECT_LE(std::abs(want[last] - got[last]), 16) << phase_name(phase);
  }
  EXPECT_EQ(bare.workload.kind, WorkloadKind::kLlmInference);
}

INSTANTIATE_TEST_SUITE_P(OwnLlamaTraces, NvtxRemoved,
                         ::testing::Values(std::make_tuple("llama_decode_h200", 2u, 128u),
                                           std::make_tuple("llama_decode_emit_nvtx_h200", 2u, 32u),
                                           std::make_tuple("llama_decode_pysample_h200", 1u, 64u)));

StepAnalysis steps_of(const std::string& relative, const OpenOptions& options = {}) {
  auto trace = open_trace((testing::fixtures_dir() / relative).string(), options);
  EXPECT_TRUE(trace) << relative;
  return analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
}

// The TraceLens SGLang trace holds two annotations: an execute_15360_context_15(..) range
// (522.7 ms) and, inside it, SGLang's own forward span step[EXTEND bs=15 toks=15360] (28.9 ms),
// the prefill whose GPU work the README says lasts ~493 ms. Python's json over the file: the 524 GPU
// operations (521 kernels, 492,672.806 us summed) launched by calls inside step[EXTEND] span
// 493,529.207 us, and the last of them ends 493,633.219 us after the span began.
TEST(StepSources, SglangForwardSpanIsThePrefillStep) {
  const auto s = steps_of("kineto/tracelens__traces__inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.xz");
  ASSERT_EQ(s.steps.size(), 1u);
  const Step& st = s.steps[0];
  EXPECT_NE(st.name.find("step[EXTEND bs=15 toks=15360]"), std::string::npos) << st.name;
  EXPECT_EQ(st.phase, Phase::kPrefill);
  EXPECT_EQ(st.wall_ns, 28'915'862);
  EXPECT_EQ(st.kernels, 521);
  EXPECT_NEAR(static_cast<double>(st.kernel_ns), 492'672'806, 521);  // JSON's 3 decimals per kernel
  EXPECT_NEAR(static_cast<double>(st.gpu_span_ns), 493'529'207, 1'000);
  ASSERT_EQ(s.ttft.count, 1);
  EXPECT_NEAR(s.ttft.p50, 493'633'219, 1'000);
}

// PyTorch's autograd engine launches the backward pass from its own thread while ProfilerStep#N is
// open on the main thread: those kernels are the step's. Python's json: each of HTA's DDP steps
// encloses the launching calls of 900 kernels (308 of them from the step's own thread), all 2,700
// of the trace; each of the ResNet-50 steps 1,462 (924 from its own thread), all 8,772. The 2021
// ResNet trace files ProfilerStep#N as an "Operator" event, not a user annotation.
TEST(StepSources, OtherThreadsOfTheProcessWorkForItsSteps) {
  struct Case {
    const char* file;
    std::size_t steps;
    std::int64_t kernels_per_step;
  };
  for (const Case& c : {Case{"ranks/hta__nccl_parser_config__nccl_data.json.xz", 3, 900},
                        Case{"kineto/kineto_tbplugin__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.xz", 6, 1462}}) {
    const auto s = steps_of(c.file);
    EXPECT_NE(s.method.find("annotations"), std::string::npos) << c.file << ": " << s.method;
    ASSERT_EQ(s.steps.size(), c.steps) << c.file;
    for (const auto& st : s.steps) {
      EXPECT_NE(st.name.find("ProfilerStep#"), std::string::npos) << c.file;
      EXPECT_EQ(st.kernels, c.kernels_per_step) << c.file << " " << st.name;
      EXPECT_EQ(st.launches, c.kernels_per_step) << c.file << " " << st.name;
    }
  }
}

// Steps found from the work, not from ranges, count their host calls too. Mordred's join benchmark
// (no NVTX): one stretch of GPU work holding all 12 kernels, launched by its 12 cudaLaunchKernel
// calls (sqlite3 over CUPTI_ACTIVITY_KIND_RUNTIME).
TEST(StepSources, StepsFoundFromTheWorkCountTheirLaunches) {
  const auto s = steps_of("nsys/mordred_quadro_rtx6000/trace.sqlite.xz");
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].kernels, 12);
  EXPECT_EQ(s.steps[0].launches, 12);
}

// Two training processes, one GPU each (sqlite3: pid 144 on device 0 with 1,993 kernels, pid 145 on
// device 1 with 2,017): period steps are one process's passes, so no step holds the other GPU's
// kernels, and each step's launches are counted. The busiest process's first anchor kernel has no
// launching call in the window nsys-ai cut (sqlite3: its correlation id has no runtime row), so
// that step began before the trace and is left out.
TEST(StepSources, PeriodStepsAreOneProcesssPasses) {
  // nsys-ai's 1 s window of a 2-GPU video-diffusion inference (FSDP weight streaming): two processes
  // of 1,721 kernels each; the steps are one process's passes, every kernel of a step its own.
  const std::string path = (testing::fixtures_dir() / "nsys/nsysai_h100_2gpu_1s/trace.sqlite.xz").string();
  auto trace = open_trace(path);
  ASSERT_TRUE(trace);
  const auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
  EXPECT_NE(s.method.find("period"), std::string::npos) << s.method;
  EXPECT_NE(s.method.find("busiest process (112"), std::string::npos) << s.method;
  ASSERT_GE(s.steps.size(), 3u);
  for (RowIndex i = 0; i < trace->kernels.size(); ++i) {
    if (s.kernel_step[i] >= 0) {
      EXPECT_EQ(pid_of(trace->kernels.global_pid[i]), 112);
    }
  }
  for (const auto& st : s.steps) EXPECT_GT(st.kernels, 0);
}

// nsys-ai's 0.3 s windows of a 2-GPU training run (FastVideo): autograd's annotations (emit_nvtx's
// ", seq = N") say training, and no optimizer kernel ran in either (counted here over the names, as
// data/op_rules.tsv's optimizer rule reads them): each window lies inside one training step, and its
// 15-17 repeating units are blocks of the forward, not steps. No steps, said (issue 44: the diff built
// its headline on them).
TEST(StepSources, ATrainingWindowWithoutAnOptimizerStepHoldsNoStep) {
  for (const char* fixture : {"nsysai_mfu_2gpu_before", "nsysai_mfu_2gpu_after"}) {
    auto trace = open_trace((testing::fixtures_dir() / "nsys" / fixture / "trace.sqlite.xz").string());
    ASSERT_TRUE(trace);
    std::size_t optimizer = 0, autograd = 0;
    for (RowIndex i = 0; i < trace->kernels.size(); ++i) {
      const auto name = trace->strings.get(trace->kernels.demangled_name[i]);
      optimizer += name.find("multi_tensor_") != std::string_view::npos || name.find("adam") != std::string_view::npos;
    }
    for (RowIndex i = 0; i < trace->nvtx.size(); ++i) {
      autograd += trace->nvtx.text[i] != kNoString && trace->strings.get(trace->nvtx.text[i]).find(", seq = ") != std::string_view::npos;
    }
    ASSERT_EQ(optimizer, 0u) << fixture;
    ASSERT_GE(autograd, 10u) << fixture;
    const auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
    EXPECT_TRUE(s.steps.empty()) << fixture << ": " << s.steps.size() << " steps; " << s.method;
    EXPECT_NE(s.method.find("a window inside one training step"), std::string::npos) << s.method;
  }
}

// A time filter that cuts into the decode loop: steps the window only partly holds are left out,
// not reported as short steps. sqlite3 over the llama fixture's NVTX_EVENTS: 6 decode_step ranges
// lie inside [18,080 ms, 18,400 ms) and 8 overlap it.
TEST(StepSources, StepsCutByAFilterAreLeftOut) {
  const std::string path = (testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.xz").string();
  auto trace = open_trace(path);
  ASSERT_TRUE(trace);
  FilterSpec spec;
  spec.time = TimeWindow{18'080'000'000, 18'400'000'000};
  auto filter = resolve_filter(*trace, spec);
  ASSERT_TRUE(filter);
  apply_filter(*trace, *filter);
  const auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
  EXPECT_EQ(s.steps.size(), 6u);
  for (const auto& st : s.steps) {
    EXPECT_GE(st.start_ns, 18'080'000'000);
    EXPECT_LE(st.end_ns, 18'400'000'000);
    EXPECT_EQ(st.phase, Phase::kDecode);
  }
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(),
                          [](const Note& n) { return n.text.find("2 step(s) cut by the filter") != std::string::npos; }));
}

// nsys-ai's 1 s window of the video model: its CUDA API rows start later than its kernels, whose
// launches (sqlite3: the host runs ~370 ms ahead) fall before them. A step whose kernels have no
// launching call in the trace reads 0 launches and says why; one whose kernels do counts them.
TEST(StepSources, StepsWhoseLaunchesPredateTheTraceSaySo) {
  const std::string path = (testing::fixtures_dir() / "nsys/nsysai_h100_2gpu_1s/trace.sqlite.xz").string();
  auto trace = open_trace(path);
  ASSERT_TRUE(trace);
  const auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
  std::set<std::pair<std::int64_t, std::uint32_t>> launched;  // (process, correlation id) of the API rows
  for (RowIndex i = 0; i < trace->api_calls.size(); ++i) {
    launched.insert({process_key(trace->api_calls.global_tid[i]), trace->api_calls.correlation_id[i]});
  }
  std::vector<bool> any_launch(s.steps.size(), false);
  for (RowIndex i = 0; i < trace->kernels.size(); ++i) {
    const auto w = s.kernel_step[i];
    if (w >= 0 && launched.contains({process_key(trace->kernels.global_pid[i]), trace->kernels.correlation_id[i]})) {
      any_launch[static_cast<std::size_t>(w)] = true;
    }
  }
  std::size_t without = 0;
  for (std::size_t w = 0; w < s.steps.size(); ++w) {
    EXPECT_EQ(s.steps[w].launches > 0, any_launch[w]) << "step " << w;
    without += !any_launch[w];
  }
  ASSERT_GT(without, 0u);
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(), [&](const Note& n) {
    return n.kind == "launches_not_traced" && n.severity == NoteSeverity::kDataLoss &&
           n.text.find(std::to_string(without) + " step(s) ran GPU work whose launching calls are not in the trace") != std::string::npos;
  }));
}

// An NVTX filter on one step's own range keeps that step whole, with its name: sqlite3 gives the
// 4th measure:decode_step range [20,926,610,941, 20,938,773,110) ns and 695 kernels launched in it.
TEST(StepSources, AFilterOnAStepsOwnRangeKeepsTheStep) {
  const std::string path = (testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.xz").string();
  auto trace = open_trace(path);
  ASSERT_TRUE(trace);
  FilterSpec spec;
  spec.nvtx = "measure:decode_step/3";
  auto filter = resolve_filter(*trace, spec);
  ASSERT_TRUE(filter);
  apply_filter(*trace, *filter);
  const auto s = analyze_steps(*trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.steps[0].name, ":measure:decode_step");
  EXPECT_EQ(s.steps[0].start_ns, 20'926'610'941);
  EXPECT_EQ(s.steps[0].wall_ns, 20'938'773'110 - 20'926'610'941);
  EXPECT_EQ(s.steps[0].kernels, 695);
}

}  // namespace
}  // namespace kernscope
