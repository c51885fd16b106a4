// Peak table parsing and device matching.
#include "analyses/work/gpu_peaks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

extern const char* const kernscope_builtin_gpu_peaks;  // data/gpu_peaks.tsv, generated at build time

namespace kernscope {
namespace {

constexpr const char* kColumns[] = {"name", "match", "sm_count", "memory_gb", "bandwidth_gbs", "fp64", "fp32",
                                    "tf32", "fp16_bf16", "fp8", "int8", "fp4", "source"};
constexpr std::size_t kColumnCount = std::size(kColumns);

// How many words of the row's match the device name has: -1 when a required word is missing, 0
// for "*". Words in parentheses are optional: they count when present ("H100 (PCIe)" fits a name
// that says only H100, when the SM count agrees, and wins over "H100" for "H100 PCIe").
int match_score(const GpuPeaks& row, const std::vector<std::string>& device_words) {
  if (row.match == "*") return 0;
  auto has = [&](const std::string& w) { return std::find(device_words.begin(), device_words.end(), w) != device_words.end(); };
  int score = 0;
  std::istringstream tokens(row.match);
  std::string token;
  while (tokens >> token) {
    const bool optional = token.size() > 2 && token.front() == '(' && token.back() == ')';
    for (const auto& w : device_name_words(token)) {
      if (has(w)) ++score;
      else if (!optional) return -1;
    }
  }
  return score;
}

bool fits(const GpuPeaks& row, const Device& d) {
  if (row.sm_count > 0 && d.sm_count > 0 && row.sm_count != d.sm_count) return false;
  if (row.memory_gb > 0 && d.total_memory_bytes > 0) {
    const double gib = static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0);
    if (std::fabs(gib / row.memory_gb - 1) > 0.10) return false;
  }
  return true;
}

// The best row of `rows` for the device; `ambiguous` lists the tied names when several fit equally.
const GpuPeaks* best_row(const std::vector<GpuPeaks>& rows, const Device& d, std::string& ambiguous) {
  const auto device_words = device_name_words(d.name);
  const GpuPeaks* best = nullptr;
  int best_score = -1;
  std::vector<const GpuPeaks*> tied;
  for (const auto& row : rows) {
    const int score = match_score(row, device_words);
    if (score < 0 || !fits(row, d)) continue;
    if (score > best_score) {
      best_score = score;
      best = &row;
      tied = {&row};
    } else if (score == best_score) {
      tied.push_back(&row);
    }
  }
  if (tied.size() > 1 && d.memory_bandwidth_bytes_per_s > 0) {
    // The trace states the bandwidth (nsys TARGET_INFO_GPU): the nearest datasheet figure wins.
    auto distance = [&](const GpuPeaks* r) {
      return std::fabs(r->bandwidth_bytes_per_s - static_cast<double>(d.memory_bandwidth_bytes_per_s));
    };
    std::stable_sort(tied.begin(), tied.end(), [&](auto* a, auto* b) { return distance(a) < distance(b); });
    if (distance(tied[0]) < distance(tied[1])) return tied[0];
  }
  if (tied.size() > 1) {
    for (std::size_t i = 0; i < tied.size(); ++i) ambiguous += (i ? ", " : "") + tied[i]->name;
    return nullptr;
  }
  return best;
}

}  // namespace

// Lower-case words of letters and digits: "NVIDIA A100-SXM4-40GB" -> nvidia a100 sxm4 40gb.
std::vector<std::string> device_name_words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::vector<std::string> split_tab_cells(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

std::optional<double> number(const std::string& text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}


Result<std::vector<GpuPeaks>> parse_gpu_peaks(const std::string& text, const std::string& origin) {
  std::vector<GpuPeaks> rows;
  std::istringstream in(text);
  std::string line;
  int number_of_line = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number_of_line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split_tab_cells(line);
    const std::string where = fmt::format("{}:{}", origin, number_of_line);
    if (!header) {
      if (cells.size() != kColumnCount || !std::equal(cells.begin(), cells.end(), std::begin(kColumns))) {
        return make_error(ErrorCode::kBadInput, where + ": expected the header line '" +
                                                    fmt::format("{}", fmt::join(kColumns, "<TAB>")) + "'");
      }
      header = true;
      continue;
    }
    if (cells.size() != kColumnCount) {
      return make_error(ErrorCode::kBadInput, fmt::format("{}: {} tab-separated columns, expected {}", where, cells.size(), kColumnCount));
    }
    GpuPeaks row;
    row.name = cells[0];
    row.match = cells[1];
    row.source = cells[12];
    row.origin = where;
    if (row.name.empty() || row.match.empty()) return make_error(ErrorCode::kBadInput, where + ": empty name or match");
    auto sm = number(cells[2]);
    auto memory = number(cells[3]);
    auto bandwidth = number(cells[4]);
    if (!sm || !memory || !bandwidth || *bandwidth <= 0) {
      return make_error(ErrorCode::kBadInput, where + ": sm_count, memory_gb and bandwidth_gbs must be numbers (bandwidth above 0)");
    }
    row.sm_count = static_cast<std::int64_t>(*sm);
    row.memory_gb = *memory;
    row.bandwidth_bytes_per_s = *bandwidth * 1e9;
    const Precision order[] = {Precision::kFp64, Precision::kFp32, Precision::kTf32, Precision::kFp16,
                               Precision::kFp8,  Precision::kInt8, Precision::kFp4};
    for (std::size_t i = 0; i < std::size(order); ++i) {
      const std::string& cell = cells[5 + i];
      if (cell == "-") continue;
      auto tflops = number(cell);
      if (!tflops || *tflops <= 0) {
        return make_error(ErrorCode::kBadInput, fmt::format("{}: {} '{}' is not a peak in TFLOP/s (or '-')", where, kColumns[5 + i], cell));
      }
      row.flops_per_s[static_cast<std::size_t>(order[i])] = *tflops * 1e12;
    }
    row.flops_per_s[static_cast<std::size_t>(Precision::kBf16)] = row.flops_per_s[static_cast<std::size_t>(Precision::kFp16)];
    rows.push_back(std::move(row));
  }
  if (!header) return make_error(ErrorCode::kBadInput, origin + ": no header line (see data/gpu_peaks.tsv for the layout)");
  return rows;
}

const std::vector<GpuPeaks>& builtin_gpu_peaks() {
  static const std::vector<GpuPeaks> rows = [] {
    auto parsed = parse_gpu_peaks(kernscope_builtin_gpu_peaks, "data/gpu_peaks.tsv");
    return parsed ? *parsed : std::vector<GpuPeaks>{};  // the build's test checks it parses
  }();
  return rows;
}

Result<std::vector<GpuPeaks>> read_gpu_peaks_file(const std::string& path) {
  if (path.empty()) return std::vector<GpuPeaks>{};
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(ErrorCode::kNotFound, "cannot read --peaks file " + path);
  std::ostringstream text;
  text << file.rdbuf();
  auto rows = parse_gpu_peaks(text.str(), path);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return make_error(ErrorCode::kBadInput, path + ": no GPU rows");
  return rows;
}

PeakMatch match_gpu_peaks(const Device& device, const std::vector<GpuPeaks>& user_rows) {
  PeakMatch m;
  m.device = device.name.empty() ? fmt::format("device {}", device.id) : device.name;
  std::string ambiguous;
  const GpuPeaks* row = user_rows.empty() ? nullptr : best_row(user_rows, device, ambiguous);
  if (!row && ambiguous.empty()) row = best_row(builtin_gpu_peaks(), device, ambiguous);
  const std::string traits = fmt::format("{} SMs, {:.0f} GiB", device.sm_count,
                                         static_cast<double>(device.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  if (row) {
    m.peaks = *row;
    m.note = fmt::format("peaks of {} ({}) for '{}' ({}): {}", row->name, row->origin, m.device, traits, row->source);
  } else if (!ambiguous.empty()) {
    m.note = fmt::format("'{}' ({}) fits several rows equally ({}): give the GPU's peaks with --peaks FILE", m.device, traits, ambiguous);
  } else {
    m.note = fmt::format("no peaks known for '{}' ({}): no row of data/gpu_peaks.tsv{} fits it; give them with --peaks FILE "
                         "(the layout of data/gpu_peaks.tsv; `kernscope peaks` measures them)",
                         m.device, traits, user_rows.empty() ? "" : " or of the --peaks file");
  }
  return m;
}

}  // namespace kernscope
