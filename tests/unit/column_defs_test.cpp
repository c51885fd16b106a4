// kernscope/column_defs.hpp names each event kind's columns once: every list must name each member
// of its struct (as visit() lists them) exactly once, and no two columns may share a Python name
// or an nsys column, or a frame or a SELECT would silently lose one.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernscope/column_defs.hpp"

namespace kernscope {
namespace {

template <class Columns>
void expect_named_once(const char* kind) {
  Columns columns;
  std::multiset<const void*> members, named;
  Columns::visit(columns, [&](const auto& column) { members.insert(&column); });
  std::set<std::string> python_names, nsys_names;
  for_each_column_def<Columns>([&](const auto& def) {
    named.insert(&(columns.*def.member));
    if (def.python) {
      EXPECT_TRUE(python_names.insert(def.python).second) << kind << ": Python name " << def.python << " twice";
    }
    if (def.nsys) {
      EXPECT_TRUE(nsys_names.insert(def.nsys).second) << kind << ": nsys column " << def.nsys << " twice";
    }
  });
  EXPECT_EQ(named, members) << kind << ": the definitions and visit() list different members";
  EXPECT_EQ(std::set<const void*>(named.begin(), named.end()).size(), named.size()) << kind << ": a member named twice";
}

TEST(ColumnDefs, EveryMemberNamedOnce) {
  expect_named_once<KernelColumns>("kernels");
  expect_named_once<MemcpyColumns>("memcpys");
  expect_named_once<MemsetColumns>("memsets");
  expect_named_once<GraphExecColumns>("graph executions");
  expect_named_once<ApiCallColumns>("API calls");
  expect_named_once<SyncColumns>("synchronizations");
  expect_named_once<NvtxColumns>("NVTX");
  expect_named_once<GpuSampleColumns>("GPU samples");
  expect_named_once<OsrtColumns>("OS runtime calls");
  expect_named_once<OverheadColumns>("profiler overhead");
}

// The Python frames' column order is the definitions' order (pandas keeps a dict's order); these
// are the first columns users and kernscope/__init__.py index by.
TEST(ColumnDefs, PythonNamesInFrameOrder) {
  std::vector<std::string> names;
  for_each_column_def<KernelColumns>([&](const auto& def) {
    if (def.python) names.emplace_back(def.python);
  });
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "start_ns");
  EXPECT_EQ(names[1], "end_ns");
  EXPECT_EQ(names[2], "global_pid");
  EXPECT_EQ(names.back(), "short_name");
}

}  // namespace
}  // namespace kernscope
