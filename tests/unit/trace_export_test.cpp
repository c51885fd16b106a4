// `kernscope export` on constructed traces: overlapping work gets its own track, GPU samples
// become counters, launch flows connect the API call to its kernel, and the file reads back.
#include <gtest/gtest.h>

#include <sstream>

#include "export/export.hpp"
#include "readers/kineto/byte_source.hpp"
#include "readers/kineto/kineto_reader.hpp"
#include "support/synthetic_trace.hpp"

namespace kernscope {
namespace {

TEST(TraceExport, OverlapsGoToTheirOwnTrackAndSamplesBecomeCounters) {
  testing::SyntheticTrace s;
  const TimeNs t0 = 1'700'000'000'123'456'789;
  s.api("cudaLaunchKernel", t0, t0 + 500, 11);
  s.kernel("a", t0 + 1000, t0 + 3000, 11);
  s.kernel("b", t0 + 2000, t0 + 4000, 0);  // overlaps "a" without nesting: same stream 7
  s.kernel("c", t0 + 2500, t0 + 2600, 0);  // nests inside "a"
  auto& g = s.trace.gpu_samples;
  g.time_ns.push_back(t0 + 1500);
  g.device_id.push_back(0);
  g.sm_clock_mhz.push_back(1980);
  g.memory_clock_mhz.push_back(2619);
  g.temperature_c.push_back(41);
  g.gpu_util_percent.push_back(87);
  g.memory_util_percent.push_back(30);
  g.power_mw.push_back(412345);
  g.memory_used_bytes.push_back(int64_t{1} << 30);
  g.pcie_tx_kbps.push_back(-1);
  g.pcie_rx_kbps.push_back(2048);
  g.clock_event_reasons.push_back(4);

  std::ostringstream out;
  auto summary = export_trace(s.trace, OpRuleSet::builtin(), out);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  const std::string json = out.str();
  EXPECT_EQ(summary->overlap_tracks, 1);
  EXPECT_EQ(summary->flows, 1);
  EXPECT_NE(json.find("\"stream 7 (overlap 1)\""), std::string::npos);
  EXPECT_NE(json.find("\"ph\": \"C\", \"name\": \"Power (W)\""), std::string::npos);
  EXPECT_NE(json.find("{\"W\": 412.345}"), std::string::npos);
  EXPECT_NE(json.find("{\"KB/s\": 2048}"), std::string::npos);
  EXPECT_EQ(json.find("PCIe TX"), std::string::npos);  // not sampled: no counter
  // Exact time: the base is the second below the first event; 123456789 ns -> 123456.789 us.
  EXPECT_NE(json.find("\"baseTimeNanoseconds\": 1700000000000000000"), std::string::npos);
  EXPECT_NE(json.find("\"ts\": 123456.789"), std::string::npos);

  auto source = kineto::memory_byte_source(json);
  auto back = kineto::read_kineto(*source, "export.json", {});
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->kernels.size(), 3u);
  std::vector<std::pair<TimeNs, TimeNs>> got;
  for (RowIndex i = 0; i < 3; ++i) got.emplace_back(back->kernels.start_ns[i], back->kernels.end_ns[i]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::pair<TimeNs, TimeNs>>{{t0 + 1000, t0 + 3000}, {t0 + 2000, t0 + 4000}, {t0 + 2500, t0 + 2600}}));
  for (RowIndex i = 0; i < 3; ++i) EXPECT_EQ(back->kernels.stream_id[i], 7u);  // the lane is a view, not a stream
}

TEST(TraceExport, UnknownFormatIsRejected) {
  EXPECT_FALSE(parse_export_format("svg").has_value());
  EXPECT_TRUE(parse_export_format("chrome").has_value());
}

}  // namespace
}  // namespace kernscope
