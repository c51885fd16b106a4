// GPU peaks for the roofline: the built-in table (data/gpu_peaks.tsv, compiled in; its header
// documents the layout) or a user's file of the same layout (--peaks FILE, e.g. what
// `kernscope peaks` measures), matched to a device of the trace by name words, SM count and memory.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/work/kernel_work.hpp"
#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct GpuPeaks {
  std::string name, match, source;
  std::string origin;  // "FILE:LINE" of the row
  std::int64_t sm_count = 0;
  double memory_gb = 0;
  double bandwidth_bytes_per_s = 0;
  // FLOP/s (OP/s for int8) by precision; nullopt where the GPU has no such rate (or kOther).
  std::array<std::optional<double>, kPrecisionCount> flops_per_s{};
  std::optional<double> peak(Precision p) const { return flops_per_s[static_cast<std::size_t>(p)]; }
};

// Parses the TSV (comments '#', a header line starting "name", then rows). Errors name the
// file and line: a missing column, a number that is not one, a bandwidth of 0.
Result<std::vector<GpuPeaks>> parse_gpu_peaks(const std::string& text, const std::string& origin);
const std::vector<GpuPeaks>& builtin_gpu_peaks();
// A --peaks file (roofline, report): no rows for an empty path; unreadable, malformed or empty: an error.
Result<std::vector<GpuPeaks>> read_gpu_peaks_file(const std::string& path);

struct PeakMatch {
  std::optional<GpuPeaks> peaks;
  std::string device;  // the device it was matched for, as the trace names it
  std::string note;    // how it matched, or why nothing did (with what to do)
};

// The peaks of `device`: the user's rows first (when given), then the built-in table.
PeakMatch match_gpu_peaks(const Device& device, const std::vector<GpuPeaks>& user_rows);

// Lower-case words of letters and digits of a device name: "NVIDIA A100-SXM4-40GB" -> nvidia a100 sxm4
// 40gb (the matching key of the GPU and link data tables).
std::vector<std::string> device_name_words(std::string_view text);
// The cells of one line of a tab-separated data table.
std::vector<std::string> split_tab_cells(const std::string& line);

}  // namespace kernscope
