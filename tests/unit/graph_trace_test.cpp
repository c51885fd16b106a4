// Whole-graph tracing (nsys --cuda-graph-trace=graph, kernscope record --cuda-graph-trace graph) on
// real exports made on an H100 from one program (bench/gpu/launch_cost.cu: 2 x 100 replays of a
// 32-kernel graph). Expected values were read from the files with Python's sqlite3 on the GPU
// machine (count, sum(end - start), graphExecId of CUPTI_ACTIVITY_KIND_GRAPH_TRACE).
#include <gtest/gtest.h>

#include <sstream>

#include "export/export.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "analyses/overview.hpp"
#include "analyses/steps/analyze_steps.hpp"
#include "analyses/steps/step_accounting.hpp"
#include "analyses/whatif/whatif.hpp"
#include "kernscope/steps.hpp"
#include "model/trace_filter.hpp"

namespace kernscope {
namespace {

struct GraphFixture {
  const char* name;
  const char* file;
  std::int64_t total_ns;
};

class WholeGraphExports : public ::testing::TestWithParam<GraphFixture> {};

TEST_P(WholeGraphExports, ReadAsGraphExecutionsThatCountAsGpuTime) {
  auto trace = open_trace(std::string(KERNSCOPE_FIXTURES_DIR) + "/graph_trace/" + GetParam().file);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  ASSERT_TRUE(trace->has(EventKind::kGraphExecs));
  const auto& g = trace->graph_execs;
  ASSERT_EQ(g.size(), 200u);
  std::int64_t total = 0;
  for (RowIndex i = 0; i < g.size(); ++i) {
    total += g.end_ns[i] - g.start_ns[i];
    EXPECT_EQ(g.graph_exec_id[i], 2);
    EXPECT_NE(g.correlation_id[i], 0u);
  }
  EXPECT_EQ(total, GetParam().total_ns);
  EXPECT_EQ(trace->kernels.size(), 0u);  // no graph node itemized

  const TraceOverview o = describe(*trace);
  EXPECT_EQ(o.graph_launches, 200);
  bool explained = false;
  for (const auto& m : o.notes) explained |= m.kind == "whole_graph_executions" && m.count == 200 && m.text.find("200 CUDA graph executions were traced as whole graphs") != std::string::npos;
  EXPECT_TRUE(explained);

  // Every execution is a slice on its stream with a flow from its cudaGraphLaunch.
  std::ostringstream out;
  auto summary = export_trace(*trace, OpRuleSet::builtin(), out);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->flows, 200);
  const std::string json = out.str();
  std::size_t slices = 0;
  for (auto at = json.find("\"cat\": \"cuda_graph\""); at != std::string::npos; at = json.find("\"cat\": \"cuda_graph\"", at + 1)) ++slices;
  EXPECT_EQ(slices, 200u);

  // A time filter keeps the executions inside its window.
  EventFilter first_half;
  first_half.start = g.start_ns[0];
  first_half.end = g.end_ns[99];  // executions on one stream run one after another
  Trace copy = *trace;
  apply_filter(copy, first_half);
  EXPECT_EQ(copy.graph_execs.size(), 100u);
}

// Their GPU time is a class of its own in ops (as in the account), one row with the 200 executions
// and the one graph; steps split at GPU idle gaps hold them (the program's 2 x 100 replays run back
// to back: one step), the account calls it gpu, and a replay that halves the graphs' time shortens
// that step (it is not left unmeasured for want of kernels).
TEST_P(WholeGraphExports, ArePartOfOpsStepsAccountAndReplays) {
  auto trace = open_trace(std::string(KERNSCOPE_FIXTURES_DIR) + "/graph_trace/" + GetParam().file);
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  auto ops = classify_operations(*trace, OpRuleSet::builtin());
  ASSERT_TRUE(ops.has_value()) << ops.error().message;
  ASSERT_EQ(ops->classes.size(), 1u);
  EXPECT_EQ(ops->classes[0].op_class, kWholeGraphClass);
  EXPECT_EQ(ops->classes[0].total_ns, GetParam().total_ns);
  EXPECT_EQ(ops->classes[0].instances, 200);
  EXPECT_EQ(ops->classes[0].kernels, 1);

  const auto steps = analyze_steps(*trace, OpRuleSet::builtin(), {});
  ASSERT_TRUE(steps.has_value()) << steps.error().message;
  ASSERT_EQ(steps->steps.size(), 1u);
  EXPECT_NE(steps->method.find("idle gaps"), std::string::npos) << steps->method;
  const auto accounting = account_steps(*trace, OpRuleSet::builtin(), *steps);
  ASSERT_EQ(accounting.steps.size(), 1u);
  EXPECT_EQ(accounting.steps[0].parts.at(std::string("gpu.") + kWholeGraphClass), GetParam().total_ns);

  WhatIfOptions options;
  options.changes.push_back(parse_whatif_change(std::string("scale=") + kWholeGraphClass + ":0.5").value());
  const auto half = what_if(*trace, OpRuleSet::builtin(), *steps, accounting, options);
  ASSERT_EQ(half.steps.size(), 1u);
  // Half of 5.09 ms of graphs is 2.54 ms: the step saves at least what the graphs leave of the
  // GPU's busy time less the host's own part (the 200 launches of ~6 us run ahead of the GPU).
  EXPECT_LT(half.steps[0].predicted_ns, half.steps[0].traced_ns - GetParam().total_ns / 4);
}

INSTANTIATE_TEST_SUITE_P(H100, WholeGraphExports,
                         ::testing::Values(GraphFixture{"nsys", "nsys_graph_level_h100.sqlite.xz", 5'086'376},
                                           GraphFixture{"kernscope", "kernscope_graph_level_h100.sqlite.xz", 5'085'901}),
                         [](const ::testing::TestParamInfo<GraphFixture>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kernscope
