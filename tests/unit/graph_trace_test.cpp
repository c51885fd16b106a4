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

INSTANTIATE_TEST_SUITE_P(H100, WholeGraphExports,
                         ::testing::Values(GraphFixture{"nsys", "nsys_graph_level_h100.sqlite.xz", 5'086'376},
                                           GraphFixture{"kernscope", "kernscope_graph_level_h100.sqlite.xz", 5'085'901}),
                         [](const ::testing::TestParamInfo<GraphFixture>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kernscope
