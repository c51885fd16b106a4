// Filter semantics (nsys's): keep an event overlapping [start, end); an NVTX filter also keeps
// only the range's thread (push/pop) and resolves RANGE[@DOMAIN][/INDEX].
#include <gtest/gtest.h>

#include "model/trace_filter.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

using testing::SyntheticTrace;
using testing::global_tid;

std::vector<std::string> kernel_names(const Trace& t) {
  std::vector<std::string> names;
  for (RowIndex i = 0; i < t.kernels.size(); ++i) names.emplace_back(t.strings.get(t.kernels.demangled_name[i]));
  return names;
}

TEST(TimeFilter, KeepsOverlapsWithHalfOpenWindow) {
  SyntheticTrace s;
  s.kernel("before", 0, 99);
  s.kernel("ends_at_start", 50, 100);     // end == start of window: kept (end >= S)
  s.kernel("inside", 120, 130);
  s.kernel("spans", 90, 300);
  s.kernel("starts_at_end", 200, 250);    // start == end of window: dropped (start < E fails)
  s.kernel("after", 250, 260);
  auto filter = resolve_filter(s.trace, FilterSpec{TimeWindow{100, 200}, std::nullopt});
  ASSERT_TRUE(filter);
  apply_filter(s.trace, *filter);
  EXPECT_EQ(kernel_names(s.trace), (std::vector<std::string>{"ends_at_start", "inside", "spans"}));
}

TEST(TimeFilter, EventWithoutEndKeptOnlyIfItStartsInside) {
  SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "open_before", 10, kNoTime);
  s.nvtx(kNvtxPushPopRange, "open_inside", 150, kNoTime);
  auto filter = resolve_filter(s.trace, FilterSpec{TimeWindow{100, 200}, std::nullopt});
  ASSERT_TRUE(filter) << filter.error().message;
  apply_filter(s.trace, *filter);
  ASSERT_EQ(s.trace.nvtx.size(), 1u);
  EXPECT_EQ(s.trace.strings.get(s.trace.nvtx.text[0]), "open_inside");
}

TEST(TimeFilter, OpenEndsCoverEverything) {
  SyntheticTrace s;
  s.kernel("a", -5, 0);
  s.kernel("b", 1'000'000, 2'000'000);
  auto filter = resolve_filter(s.trace, FilterSpec{TimeWindow{std::nullopt, std::nullopt}, std::nullopt});
  ASSERT_TRUE(filter) << filter.error().message;
  apply_filter(s.trace, *filter);
  EXPECT_EQ(s.trace.kernels.size(), 2u);
}

TEST(NvtxFilter, PicksInstanceByIndexAndRestrictsToThread) {
  SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "step", 0, 100);
  s.nvtx(kNvtxPushPopRange, "step", 200, 300);
  s.nvtx(kNvtxPushPopRange, "other", 200, 300, global_tid(2));
  s.api("cudaLaunchKernel", 210, 220, 1);                  // thread 1, inside step/1
  s.api("cudaLaunchKernel", 230, 240, 2, global_tid(2));  // thread 2: dropped
  s.kernel("k1", 250, 260, 1);                            // same process: kept
  s.kernel("k0", 50, 60, 9);                              // outside the window
  auto filter = resolve_filter(s.trace, FilterSpec{std::nullopt, std::string("step/1")});
  ASSERT_TRUE(filter) << filter.error().message;
  EXPECT_EQ(filter->start, 200);
  EXPECT_EQ(filter->end, 300);
  apply_filter(s.trace, *filter);
  EXPECT_EQ(s.trace.api_calls.size(), 1u);
  EXPECT_EQ(kernel_names(s.trace), (std::vector<std::string>{"k1"}));
  EXPECT_EQ(s.trace.nvtx.size(), 1u);  // "other" is on thread 2
}

TEST(NvtxFilter, SlashWithoutNumberBelongsToName) {
  SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "a/b", 0, 100);
  EXPECT_TRUE(resolve_filter(s.trace, FilterSpec{std::nullopt, std::string("a/b")}));
  EXPECT_TRUE(resolve_filter(s.trace, FilterSpec{std::nullopt, std::string("a/b/0")}));
  auto missing = resolve_filter(s.trace, FilterSpec{std::nullopt, std::string("a/b/1")});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(NvtxFilter, DomainNamedWithAt) {
  SyntheticTrace s;
  s.nvtx(kNvtxDomainCreate, "engine", 0, kNoTime, global_tid(1), 5);
  s.nvtx(kNvtxPushPopRange, "decode", 10, 20, global_tid(1), 5);
  EXPECT_TRUE(resolve_filter(s.trace, FilterSpec{std::nullopt, std::string("decode@engine")}));
  EXPECT_FALSE(resolve_filter(s.trace, FilterSpec{std::nullopt, std::string("decode")}));
}

TEST(NvtxFilter, TimeWindowOverridesRangeBounds) {
  SyntheticTrace s;
  s.nvtx(kNvtxPushPopRange, "step", 100, 500);
  auto filter = resolve_filter(s.trace, FilterSpec{TimeWindow{200, std::nullopt}, std::string("step")});
  ASSERT_TRUE(filter);
  EXPECT_EQ(filter->start, 200);
  EXPECT_EQ(filter->end, 500);
}

}  // namespace
}  // namespace kernscope
