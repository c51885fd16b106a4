// The peak table: it parses, rows hold dense datasheet figures, devices match by name words, SM
// count, memory and bandwidth; a GPU missing from the table gets a note, not zeros.
#include <gtest/gtest.h>

#include "analyses/work/gpu_peaks.hpp"

namespace kernscope {
namespace {

Device device(std::string name, std::int64_t sms, double gib = 0, double bandwidth_gbs = 0) {
  Device d;
  d.name = std::move(name);
  d.sm_count = sms;
  d.total_memory_bytes = static_cast<std::int64_t>(gib * 1024 * 1024 * 1024);
  d.memory_bandwidth_bytes_per_s = static_cast<std::int64_t>(bandwidth_gbs * 1e9);
  return d;
}

std::string matched(const Device& d) {
  auto m = match_gpu_peaks(d, {});
  return m.peaks ? m.peaks->name : "none";
}

TEST(GpuPeaks, BuiltinTableParsesWithDenseFigures) {
  const auto& rows = builtin_gpu_peaks();
  ASSERT_GE(rows.size(), 25u);  // parse failure leaves it empty
  for (const auto& r : rows) {
    EXPECT_GT(r.bandwidth_bytes_per_s, 0) << r.name;
    EXPECT_TRUE(r.peak(Precision::kBf16).has_value()) << r.name;
    EXPECT_FALSE(r.source.empty()) << r.name;
  }
  // H100 SXM: NVIDIA's datasheet prints 1979 TFLOPS BF16 with sparsity; dense is half (reference table 1b).
  auto h100 = match_gpu_peaks(device("NVIDIA H100 80GB HBM3", 132, 79.2), {}).peaks.value();
  EXPECT_DOUBLE_EQ(*h100.peak(Precision::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(*h100.peak(Precision::kFp8), 1979e12);
  EXPECT_DOUBLE_EQ(h100.bandwidth_bytes_per_s, 3350e9);
  EXPECT_FALSE(h100.peak(Precision::kFp4).has_value());  // Hopper has no FP4 tensor rate
  EXPECT_FALSE(h100.peak(Precision::kOther).has_value());
}

TEST(GpuPeaks, H100VariantsBySmCountAndName) {
  EXPECT_EQ(matched(device("NVIDIA H100 80GB HBM3", 132, 79.2)), "H100 SXM");
  EXPECT_EQ(matched(device("NVIDIA H100 PCIe", 114, 79.2)), "H100 PCIe");
  EXPECT_EQ(matched(device("NVIDIA H100 NVL", 132, 93.6)), "H100 NVL");
  // A name that says only "H100": the SM count tells SXM (132) from PCIe (114).
  EXPECT_EQ(matched(device("NVIDIA H100", 132)), "H100 SXM");
  EXPECT_EQ(matched(device("NVIDIA H100", 114)), "H100 PCIe");
  // Without an SM count, the name's words decide; "H100" alone fits SXM and PCIe equally: refused.
  EXPECT_EQ(matched(device("NVIDIA H100 PCIe", 0)), "H100 PCIe");
  EXPECT_EQ(matched(device("NVIDIA H100", 0)), "none");
  // ... unless the trace states the bandwidth (nsys TARGET_INFO_GPU): 2 TB/s is the PCIe card.
  EXPECT_EQ(matched(device("NVIDIA H100", 0, 0, 2039)), "H100 PCIe");
  // Whole words: H20 is not H200, H200 NVL is not H200.
  EXPECT_EQ(matched(device("NVIDIA H20", 78, 95.0)), "H20");
  EXPECT_EQ(matched(device("NVIDIA H200", 132, 139.8)), "H200");
  EXPECT_EQ(matched(device("NVIDIA H200 NVL", 132, 139.8)), "H200 NVL");
  // Old drivers without the vendor prefix, case-insensitive.
  EXPECT_EQ(matched(device("a100-sxm4-40gb", 108, 39.4)), "A100 SXM4 40GB");
  EXPECT_EQ(matched(device("AMD Instinct MI300X VF", 304, 191.5)), "MI300X");
}

TEST(GpuPeaks, BandwidthBreaksTies) {
  // GH200 comes with 96 GB HBM3 (4 TB/s) or 144 GB HBM3e (4.9 TB/s): memory, else bandwidth, decides.
  EXPECT_EQ(matched(device("NVIDIA GH200 480GB", 132, 94.5)), "GH200 96GB");
  EXPECT_EQ(matched(device("NVIDIA GH200 480GB", 132, 0, 4900)), "GH200 144GB");
  auto tied = match_gpu_peaks(device("NVIDIA GH200 480GB", 132), {});
  EXPECT_FALSE(tied.peaks.has_value());
  EXPECT_NE(tied.note.find("--peaks"), std::string::npos) << tied.note;
}

TEST(GpuPeaks, UnknownGpuGetsANoteNotZeros) {
  auto m = match_gpu_peaks(device("NVIDIA GeForce GTX 1080", 20, 8), {});
  EXPECT_FALSE(m.peaks.has_value());
  EXPECT_NE(m.note.find("no peaks known for 'NVIDIA GeForce GTX 1080'"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("--peaks FILE"), std::string::npos) << m.note;
}

const char* kHeader = "name\tmatch\tsm_count\tmemory_gb\tbandwidth_gbs\tfp64\tfp32\ttf32\tfp16_bf16\tfp8\tint8\tfp4\tsource\n";

TEST(GpuPeaks, UserFileComesFirst) {
  auto rows = parse_gpu_peaks(std::string("# measured\n") + kHeader + "my H100\t*\t0\t0\t2700\t-\t-\t-\t780\t1370\t-\t-\tkernscope peaks\n",
                              "mine.tsv");
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  auto m = match_gpu_peaks(device("NVIDIA H100 80GB HBM3", 132, 79.2), *rows);
  ASSERT_TRUE(m.peaks.has_value());
  EXPECT_EQ(m.peaks->name, "my H100");
  EXPECT_EQ(m.peaks->origin, "mine.tsv:3");
  EXPECT_DOUBLE_EQ(*m.peaks->peak(Precision::kFp16), 780e12);
  EXPECT_DOUBLE_EQ(m.peaks->bandwidth_bytes_per_s, 2700e9);
  EXPECT_FALSE(m.peaks->peak(Precision::kFp64).has_value());
}

TEST(GpuPeaks, BadFilesSayWhereAndWhy) {
  auto no_header = parse_gpu_peaks("H100\tH100\t132\n", "bad.tsv");
  ASSERT_FALSE(no_header.has_value());
  EXPECT_NE(no_header.error().message.find("bad.tsv:1: expected the header line"), std::string::npos);
  auto short_row = parse_gpu_peaks(std::string(kHeader) + "x\tx\t1\n", "bad.tsv");
  ASSERT_FALSE(short_row.has_value());
  EXPECT_NE(short_row.error().message.find("bad.tsv:2: 3 tab-separated columns, expected 13"), std::string::npos);
  auto bad_number = parse_gpu_peaks(std::string(kHeader) + "x\tx\t1\t0\t100\t-\t-\t-\tfast\t-\t-\t-\ts\n", "bad.tsv");
  ASSERT_FALSE(bad_number.has_value());
  EXPECT_NE(bad_number.error().message.find("fp16_bf16 'fast'"), std::string::npos);
  auto no_bandwidth = parse_gpu_peaks(std::string(kHeader) + "x\tx\t1\t0\t0\t-\t-\t-\t1\t-\t-\t-\ts\n", "bad.tsv");
  EXPECT_FALSE(no_bandwidth.has_value());
  EXPECT_FALSE(parse_gpu_peaks("# only comments\n", "empty.tsv").has_value());
}

}  // namespace
}  // namespace kernscope
