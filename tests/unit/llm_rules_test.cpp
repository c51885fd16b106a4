// kernscope's LLM rules and report on traces whose answers hold by construction, and on the llama
// fixture, whose decode steps (695 launches each per nsys's nvtx_gpu_proj_sum, no CUDA graphs,
// ~13 ms wall for ~1.7 ms of kernels) are launch-bound by any reading.
#include <gtest/gtest.h>

#include <map>

#include "render/diagnosis_words.hpp"
#include "render/advice_render.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "kernscope/open.hpp"
#include "render/document_render.hpp"
#include "support/findings.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

using testing::rule;

// Decode steps of 1 ms each with `launches` tiny kernels, optional sync/alloc/H2D per step.
// `numbered`: the ranges are decode_step#0, #1, ... (one group, decode_step#N).
testing::SyntheticTrace decode_loop(int steps, int launches, bool sync, bool alloc, bool h2d, bool numbered = false) {
  testing::SyntheticTrace s;
  std::uint32_t corr = 1;
  for (int st = 0; st < steps; ++st) {
    const TimeNs base = st * 1'000'000;
    s.nvtx(kNvtxPushPopRange, numbered ? "decode_step#" + std::to_string(st) : std::string("decode_step"), base, base + 1'000'000);
    for (int i = 0; i < launches; ++i) {
      const TimeNs t = base + 1000 + i * 4000;
      s.api("cudaLaunchKernel_v7000", t, t + 2000, corr);
      s.kernel("gemvx::kernel", t + 2500, t + 3500, corr);  // 1 us kernels
      ++corr;
    }
    if (sync) s.api("cudaStreamSynchronize_v3020", base + 900'000, base + 950'000, corr++);
    if (alloc) s.api("cudaMalloc_v3020", base + 960'000, base + 970'000, corr++);
    if (h2d) {
      s.api("cudaMemcpyAsync_v3020", base + 980'000, base + 985'000, corr);
      auto& m = s.trace.memcpys;
      m.start_ns.push_back(base + 986'000); m.end_ns.push_back(base + 987'000); m.global_pid.push_back(testing::global_pid());
      m.bytes.push_back(64); m.graph_node_id.push_back(0); m.device_id.push_back(0); m.context_id.push_back(1);
      m.green_context_id.push_back(0); m.stream_id.push_back(7); m.correlation_id.push_back(corr++); m.copy_kind.push_back(1);
      m.src_kind.push_back(0); m.dst_kind.push_back(2); m.src_device_id.push_back(-1); m.dst_device_id.push_back(0);
    }
  }
  return s;
}

std::vector<Finding> llm_findings(const Trace& t) {
  auto steps = analyze_steps(t, OpRuleSet::builtin(), {}).value();
  return run_llm_rules(t, steps, AnalyzeOptions{});
}

TEST(LlmRules, LaunchBoundLoopWithSyncAllocAndCopies) {
  auto s = decode_loop(10, 200, true, true, true);  // 200 x 1 us of kernels in a 1 ms step: 80 % idle
  const auto f = llm_findings(s.trace);
  EXPECT_EQ(rule(f, "llm_launch_bound").count, 10);
  EXPECT_EQ(rule(f, "llm_launch_bound").severity, "critical");
  EXPECT_EQ(rule(f, "llm_sync_in_loop").count, 10);
  EXPECT_EQ(rule(f, "llm_alloc_in_loop").count, 10);
  EXPECT_EQ(rule(f, "llm_h2d_in_loop").count, 10);
  EXPECT_EQ(rule(f, "llm_tiny_kernels").count, 2000);
}

// Numbered steps are one group (step_group_name): the rules read every step of it.
TEST(LlmRules, NumberedDecodeStepsAreOneGroupTheRulesRead) {
  auto s = decode_loop(10, 200, true, true, true, true);
  const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
  ASSERT_EQ(steps.groups.size(), 1u);
  EXPECT_EQ(steps.groups[0].name, ":decode_step#N");
  const auto f = run_llm_rules(s.trace, steps, AnalyzeOptions{});
  EXPECT_EQ(rule(f, "llm_launch_bound").count, 10);
  EXPECT_EQ(rule(f, "llm_sync_in_loop").count, 10);
  EXPECT_EQ(rule(f, "llm_alloc_in_loop").count, 10);
  EXPECT_EQ(rule(f, "llm_h2d_in_loop").count, 10);
  EXPECT_EQ(rule(f, "llm_tiny_kernels").count, 2000);
}

TEST(LlmRules, QuietLoopRaisesNothing) {
  auto s = decode_loop(10, 50, false, false, false);  // 50 launches per step: below the launch threshold
  const auto f = llm_findings(s.trace);
  for (const char* r : {"llm_launch_bound", "llm_sync_in_loop", "llm_alloc_in_loop", "llm_h2d_in_loop", "llm_graphs_hidden", "llm_tail_anomalies"}) {
    EXPECT_EQ(rule(f, r).count, 0) << r;
    EXPECT_EQ(rule(f, r).severity, "none") << r;
  }
}

// Graphs traced as units: the launches ran graph executions, and no kernel is a graph's (neither a
// node id nor a graph launch's correlation id).
TEST(LlmRules, GraphLaunchesWithoutNodeKernelsAreHidden) {
  testing::SyntheticTrace s;
  s.api("cudaLaunchKernel_v7000", 0, 5, 9);
  s.kernel("eager_kernel", 6, 8, 9);
  s.api("cudaGraphLaunch_v10000", 10, 20, 1);
  s.graph_exec(20, 30, 1);
  EXPECT_EQ(rule(llm_findings(s.trace), "llm_graphs_hidden").count, 1);
  // A backtraced launch (nsys --cudabacktrace: the record encloses the call, same id) is one launch.
  s.api("cudaGraphLaunch", 40, 60, 2);
  s.api("cudaGraphLaunch_v10000", 45, 55, 2);
  s.graph_exec(70, 80, 2);
  EXPECT_EQ(rule(llm_findings(s.trace), "llm_graphs_hidden").count, 2);
  s.trace.kernels.graph_node_id.set(0, 42);  // traced node by node: nothing hidden
  EXPECT_EQ(rule(llm_findings(s.trace), "llm_graphs_hidden").count, 0);
}

// Kineto and roctracer keep no node ids: a graph replay's kernels carry its launch's correlation id
// (hipGraphLaunch on AMD, cudaGraphLaunch on CUDA). They are the graph's kernels, itemized.
TEST(LlmRules, KernelsOfAGraphLaunchByCorrelationAreNotHidden) {
  for (const char* launch : {"hipGraphLaunch", "cudaGraphLaunch"}) {
    testing::SyntheticTrace s;
    s.api(launch, 10, 20, 1);
    s.kernel("Cijk_Alik_Bljk_HHS_BH_MT64x64x64", 30, 40, 1);
    s.kernel("rms_norm_kernel", 40, 50, 1);
    const Finding f = rule(llm_findings(s.trace), "llm_graphs_hidden");
    EXPECT_EQ(f.count, 0) << launch << ": " << f.evidence;
    EXPECT_NE(f.evidence.find("2 kernels from graph nodes"), std::string::npos) << f.evidence;
  }
}

// The JSON text without the whitespace between tokens, so checks do not depend on its layout.
std::string compact_json(const std::string& json) {
  std::string out;
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      continue;
    }
    out += c;
  }
  return out;
}

TEST(Report, TraceWithoutKernelsSaysSoAndStillReportsItsCalls) {
  testing::SyntheticTrace api_only;
  api_only.trace.present = bit(EventKind::kApiCalls);
  api_only.api("cudaMalloc_v3020", 0, 10, 1);
  auto d = diagnose(api_only.trace, OpRuleSet::builtin(), {}, {});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->kernels, 0);
  EXPECT_EQ(d->api_calls, 1);
  EXPECT_EQ(d->gpu_kernel_ns, 0);
  EXPECT_TRUE(d->steps.steps.empty());
  // The lack of GPU work is the one diagnosis, and the one action says what to record instead (an
  // object, not an empty list: issue 46), with the trace's one CUDA call and no prediction.
  ASSERT_EQ(d->diagnosis.size(), 1u);
  EXPECT_TRUE(diagnosis_sentence(d->diagnosis[0]).starts_with("No GPU work in this trace")) << diagnosis_sentence(d->diagnosis[0]);
  ASSERT_EQ(d->next_actions.size(), 1u);
  EXPECT_EQ(d->next_actions[0].kind, "trace-gpu");
  EXPECT_EQ(d->next_actions[0].facts.api_calls, 1);
  EXPECT_FALSE(d->next_actions[0].predicted.has_value());
  EXPECT_FALSE(d->next_actions[0].why_not_predicted.empty());
  // One call has no tail (its max is its median): no tail anomaly is reported.
  EXPECT_TRUE(d->api_tail.empty());
  const std::string text = render_diagnosis_text(*d);
  EXPECT_NE(text.find("devices: Test GPU; 0 kernels (0.000 ms), 1 CUDA API calls\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nDiagnosis\n  - No GPU work in this trace"), std::string::npos) << text;
  const std::string json = compact_json(render_diagnosis_json(*d));
  EXPECT_NE(json.find("\"kernels\":0,\"api_calls\":1,\"gpu_kernel_ns\":0,"), std::string::npos) << json;
}

TEST(Report, OverlappingStepRangesAreTwoStepsThatShareNoLaunch) {
  // One decode step of 5 launches (1 us kernels at 1000 + 4000 i + 2500 ns) and a "forward" range
  // over 500..2,000,000 ns that overlaps the step without nesting. Both names mark steps and neither
  // range encloses the other, so both are steps. A launch belongs to one step only (the last of its
  // thread to start before it that also contains it: steps.cpp), so the five launches (1000..19,000
  // ns) are the forward step's, counted once.
  auto one = decode_loop(1, 5, false, false, false);
  one.nvtx(kNvtxPushPopRange, "forward", 500, 2'000'000);
  auto d = diagnose(one.trace, OpRuleSet::builtin(), {}, {});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->kernels, 5);
  EXPECT_EQ(d->api_calls, 5);
  EXPECT_EQ(d->gpu_kernel_ns, 5000);
  ASSERT_EQ(d->steps.steps.size(), 2u);
  std::map<std::string, std::vector<std::int64_t>> launches_kernels_ns;
  for (const auto& step : d->steps.steps) launches_kernels_ns[step.name] = {step.launches, step.kernels, step.kernel_ns};
  EXPECT_EQ(launches_kernels_ns, (std::map<std::string, std::vector<std::int64_t>>{
                                     {":decode_step", {0, 0, 0}}, {":forward", {5, 5, 5000}}}));
  const std::string text = render_diagnosis_text(*d);
  EXPECT_NE(text.find("; 5 kernels (0.005 ms), 5 CUDA API calls\n  workload: "), std::string::npos) << text;
  EXPECT_NE(text.find("\n  steps: 2 ("), std::string::npos) << text;
  const std::string json = compact_json(render_diagnosis_json(*d));
  EXPECT_TRUE(json.starts_with("{\"schema\":\"kernscope.report/1\",")) << json;
  EXPECT_NE(json.find("\"kernels\":5,\"api_calls\":5,\"gpu_kernel_ns\":5000,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"steps\":{\"method\":\"annotations that name steps"), std::string::npos) << json;
  EXPECT_NE(json.find("\",\"count\":2,\"decode_wall\":{\"count\":"), std::string::npos) << json;
}

TEST(Report, AnIdleGapIsOneActionOnItsPartWithTheRulesAsEvidence) {
  // Two kernels 900 ms apart: nsys's gap rule finds one gap of 899.999 ms (> 500 ms), all of it
  // between the first step's start and the last one's end (whatever steps are found), and nothing
  // recorded on the host: the account's idle.unexplained part holds it, and its one action (find
  // the host's work) carries both timeline rules as evidence (the same idle GPU, advised once).
  testing::SyntheticTrace s;
  s.kernel("a", 1'000'000, 1'001'000);
  s.kernel("b", 901'000'000, 901'001'000);
  auto d = diagnose(s.trace, OpRuleSet::builtin(), {}, {});
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(rule(d->findings, "gpu_gaps").count, 1);
  ASSERT_GT(rule(d->findings, "gpu_time_util").count, 0);
  int idle_actions = 0;
  for (const auto& a : d->next_actions) {
    if (!a.part.starts_with("idle")) continue;
    ++idle_actions;
    EXPECT_EQ(a.part, "idle.unexplained");
    EXPECT_EQ(a.kind, "find-host-work");
    EXPECT_EQ(a.time_ns, 899'999'000) << action_sentence(a);  // the gap: 901,000,000 - 1,001,000 ns
    ASSERT_EQ(a.evidence.size(), 2u) << action_sentence(a);
    EXPECT_TRUE(a.evidence[0].starts_with(rule(d->findings, "gpu_gaps").title) ||
                a.evidence[1].starts_with(rule(d->findings, "gpu_gaps").title));
  }
  EXPECT_EQ(idle_actions, 1) << render_diagnosis_text(*d);
  for (const auto& a : d->next_actions) EXPECT_FALSE(action_sentence(a).starts_with("Keep the GPU fed")) << action_sentence(a);
}

TEST(ReportOnLlama, DiagnosesLaunchBoundDecodeAndGemv) {
  auto trace = open_trace((testing::fixtures_dir() / "nsys/llama_decode_h200/trace.sqlite.xz").string());
  ASSERT_TRUE(trace);
  auto d = diagnose(*trace, OpRuleSet::builtin(), {}, {}).value();
  EXPECT_EQ(rule(d.findings, "llm_launch_bound").count, 64);
  ASSERT_FALSE(d.decode_classes.empty());
  EXPECT_EQ(d.decode_classes.front().op_class, "gemv");
  ASSERT_FALSE(d.next_actions.empty());
  EXPECT_NE(action_sentence(d.next_actions.front()).find("CUDA graph"), std::string::npos);
  // The first action as data: CUDA graphs on the host's launch time, priced by the replay of the
  // measured decode steps (TPOT from the trace, to a predicted one below it).
  const ReportAction& first = d.next_actions.front();
  EXPECT_EQ(first.kind, "cuda-graphs");
  EXPECT_EQ(first.part, "host.launch");
  EXPECT_EQ(first.change, "graphs");
  ASSERT_TRUE(first.predicted.has_value());
  EXPECT_EQ(first.predicted->metric, "TPOT");
  EXPECT_GT(first.predicted->from_ns, first.predicted->to_ns);
  EXPECT_GT(first.predicted->to_ns, 0);
  // An action the replay cannot price says why, and carries no prediction.
  for (const auto& a : d.next_actions) EXPECT_TRUE(a.predicted.has_value() || !a.why_not_predicted.empty()) << action_sentence(a);
  // The low-utilization region is the launch-bound steps' idle GPU: said, not advised twice.
  for (const auto& a : d.next_actions) EXPECT_FALSE(action_sentence(a).starts_with("Keep the GPU fed")) << action_sentence(a);
  bool attention_decode = false;
  for (const auto& c : d.decode_classes) attention_decode |= c.op_class == "attention_decode";
  EXPECT_TRUE(attention_decode);
}

}  // namespace
}  // namespace kernscope
