#include "render/roofline_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "base/text_util.hpp"
#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope {

namespace {

// Which steps a headline figure is over and where its work came from.
std::string headline_basis(const RooflineHeadline& h) {
  std::string from = fmt::format("{} {} steps '{}', {:.3f} ms per step (max of wall and GPU span)", h.steps, phase_name(h.phase),
                                 h.group, h.step_ns / 1e6);
  if (!h.work_source.empty()) return from + fmt::format("; work from {} ({})", h.work_source, h.work_detail);
  return from + fmt::format("; work of the kernels with known work ({} of the steps' kernel time)", text::percent(h.covered_share));
}

}  // namespace

std::string roofline_headline_line(const RooflineHeadline& h, double latency_floor_ns) {
  using Kind = RooflineHeadline::Kind;
  switch (h.kind) {
    case Kind::kDecodeMbu:
      return fmt::format("decode MBU {}: {:.2f} GB per step / step time = {:.1f} GB/s of {:.0f} GB/s peak ({})", text::percent(h.share()),
                         h.per_step / 1e9, h.achieved / 1e9, h.peak / 1e9, headline_basis(h));
    case Kind::kDecodeGemvAggregate:
      return fmt::format(
          "decode GEMV bandwidth efficiency {} (aggregate over the step's projection kernels): {:.3f} GB of weight matrices "
          "per step (the model config) in {:.3f} ms of GEMV/GEMM kernels per step = {:.1f} GB/s of {:.0f} GB/s peak "
          "(mean of {} steps; kernel time of the classes {})",
          text::percent(h.share()), h.per_step / 1e9, h.kernel_ns / static_cast<double>(h.steps) / 1e6, h.achieved / 1e9, h.peak / 1e9,
          h.steps, fmt::join(kProjectionClasses, ", "));
    case Kind::kDecodeGemv: {
      std::string line = fmt::format(
          "decode GEMV bandwidth efficiency {}: {:.2f} GB in {:.3f} ms of GEMV kernels = {:.1f} GB/s of {:.0f} GB/s peak "
          "({} launches in those steps; bytes / kernel time / peak bandwidth, no latency floor)",
          text::percent(h.share()), h.bytes / 1e9, h.kernel_ns / 1e6, h.achieved / 1e9, h.peak / 1e9, h.launches);
      line += fmt::format(
          "; against their roof they reach {} (ideal {:.3f} ms / {:.3f} ms): {} of the {} launches need less than the {:g} us "
          "latency floor at peak bandwidth and are held to it",
          text::percent(h.ideal_ns / h.kernel_ns), h.ideal_ns / 1e6, h.kernel_ns / 1e6, h.under_floor, h.launches, latency_floor_ns / 1000);
      if (h.launches_in_trace != h.launches) {
        line += fmt::format(" (the gemv row of --by class covers all {} GEMV launches with known work, these are the decode steps' {})",
                            h.launches_in_trace, h.launches);
      }
      return line;
    }
    case Kind::kPrefillMfu:
      return fmt::format("prefill MFU {}: {:.2f} TFLOP per step / step time = {:.1f} TFLOP/s of {:.1f} ({} dense peak; {})",
                         text::percent(h.share()), h.per_step / 1e12, h.achieved / 1e12, h.peak / 1e12, precision_name(h.precision),
                         headline_basis(h));
  }
  return {};
}

std::vector<Note> roofline_notes(const RooflineResult& result) {
  std::vector<Note> notes = result.notes;
  for (const auto& w : result.withheld) {
    notes.push_back({"headline_withheld", NoteSeverity::kInfo,
                     fmt::format("{} {}: no {} headline: kernel work is known for {} of the steps' kernel time (under half)",
                                 phase_name(w.phase), w.group, w.phase == Phase::kDecode ? "MBU" : "MFU", text::percent(w.covered_share))});
  }
  return notes;
}

std::string roofline_coverage_line(std::int64_t kernel_ns, std::int64_t covered_ns, const std::map<std::string, std::int64_t>& by_source,
                                   const std::string& step_work_source) {
  const double share = kernel_ns > 0 ? static_cast<double>(covered_ns) / static_cast<double>(kernel_ns) : 0;
  std::string coverage = fmt::format("work known for {} of kernel time ({:.3f} of {:.3f} ms)", text::percent(share), covered_ns / 1e6,
                                     kernel_ns / 1e6);
  for (const auto& [source, ns] : by_source) {
    coverage += fmt::format("; {} {}", source, text::percent(static_cast<double>(ns) / static_cast<double>(kernel_ns)));
  }
  if (covered_ns == 0 && !step_work_source.empty()) {
    // A model config costs whole steps, not kernels: said, not "no source".
    coverage += fmt::format(": no work per kernel; {} gives each step's work (the headline's figures; rows with --by step)", step_work_source);
  } else if (covered_ns == 0) {
    coverage += ": no source of FLOPs and bytes in this trace (record with PyTorch's profiler and record_shapes=True, or "
                "run under emit_nvtx(record_shapes=True) in nsys)";
  }
  return coverage;
}

std::vector<std::string> roofline_summary_lines(const RooflineResult& result) {
  std::vector<std::string> lines;
  lines.push_back(result.peaks.note);
  if (const auto& p = result.peaks.peaks) {
    std::string roofs = fmt::format("roofs: {:.0f} GB/s", p->bandwidth_bytes_per_s / 1e9);
    for (Precision q : {Precision::kFp64, Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp8,
                        Precision::kInt8, Precision::kFp4}) {
      if (auto v = p->peak(q)) roofs += fmt::format(", {} {:g} TFLOP/s", q == Precision::kBf16 ? "fp16/bf16" : precision_name(q), *v / 1e12);
    }
    lines.push_back(roofs + fmt::format(" (dense); latency floor {:g} us per kernel", result.latency_floor_ns / 1000));
  }
  std::string coverage = roofline_coverage_line(result.kernel_ns, result.covered_ns, result.covered_by_source, result.step_work_source);
  lines.push_back(coverage);
  double recoverable = 0;
  for (const auto& r : result.rows) recoverable += r.recoverable_ns();
  if (result.peaks.peaks && result.covered_ns > 0) {
    lines.push_back(fmt::format("recoverable: {:.3f} ms of the covered {:.3f} ms ({}) if every kernel ran at its roof",
                                recoverable / 1e6, result.covered_ns / 1e6, text::percent(recoverable / static_cast<double>(result.covered_ns))));
  }
  for (const auto& h : result.headline) lines.push_back(roofline_headline_line(h, result.latency_floor_ns));
  return lines;
}

std::string roofline_text_chart(const RooflineResult& result, std::size_t points) {
  const auto& p = result.peaks.peaks;
  if (!p) return {};
  // The highest compute roof among the precisions the rows used is the flat roof drawn.
  double peak = 0;
  for (const auto& v : p->flops_per_s) {
    if (v) peak = std::max(peak, *v);
  }
  if (const auto bf16 = p->peak(Precision::kBf16)) peak = *bf16;  // the usual LLM precision; others listed in the legend
  if (peak <= 0) return {};
  constexpr int kWidth = 64, kHeight = 19;  // 18 rows = 6 decades, a label every 3
  const double x_min = -2, x_max = 4;  // log10 intensity, FLOP/B
  const double y_max = std::ceil(std::log10(peak / 1e12) + 0.3), y_min = y_max - 6;  // log10 TFLOP/s
  std::vector<std::string> grid(kHeight, std::string(kWidth, ' '));
  auto col = [&](double x) { return static_cast<int>(std::lround((x - x_min) / (x_max - x_min) * (kWidth - 1))); };
  auto line = [&](double y) { return kHeight - 1 - static_cast<int>(std::lround((y - y_min) / (y_max - y_min) * (kHeight - 1))); };
  for (int c = 0; c < kWidth; ++c) {
    const double x = x_min + (x_max - x_min) * c / (kWidth - 1);
    const double roof = std::min(peak, std::pow(10.0, x) * p->bandwidth_bytes_per_s);
    const int r = line(std::log10(roof / 1e12));
    if (r >= 0 && r < kHeight) grid[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = roof < peak ? '/' : '-';
  }
  std::string legend;
  char mark = 'A';
  std::size_t shown = 0;
  for (const auto& r : result.rows) {
    if (shown >= points || !r.has_work || r.bytes <= 0 || r.flops <= 0 || r.time_ns <= 0) continue;
    const double x = std::log10(r.flops / r.bytes);
    const double y = std::log10(r.flops / (static_cast<double>(r.time_ns) / 1e9) / 1e12);
    const int c = std::clamp(col(x), 0, kWidth - 1), row = std::clamp(line(y), 0, kHeight - 1);
    grid[static_cast<std::size_t>(row)][static_cast<std::size_t>(c)] = mark;
    std::string name = r.name.size() > 70 ? r.name.substr(0, 67) + "..." : r.name;
    legend += fmt::format("  {} {} ({:.2f} FLOP/B, {:.3f} TFLOP/s, {} roof, {:.1f} % of it)\n", mark, name, r.flops / r.bytes,
                          r.flops / (static_cast<double>(r.time_ns) / 1e9) / 1e12, roof_name(r.roof), r.percent_of_roof());
    ++shown;
    if (mark == 'Z') break;
    ++mark;
  }
  std::string out = fmt::format("TFLOP/s (log; roof: {:.0f} GB/s '/', fp16/bf16 {:g} TFLOP/s '-')\n", p->bandwidth_bytes_per_s / 1e9, peak / 1e12);
  for (int r = 0; r < kHeight; ++r) {
    const double y = y_max - (y_max - y_min) * r / (kHeight - 1);
    const bool label = r % 3 == 0;
    out += label ? fmt::format("{:>8g} |", std::pow(10.0, std::round(y))) : std::string(8, ' ') + " |";
    out += grid[static_cast<std::size_t>(r)];
    out += '\n';
  }
  out += std::string(9, ' ') + '+' + std::string(kWidth, '-') + '\n';
  // Decade labels under their columns (the plot starts after the 10-character axis).
  std::string labels(10 + kWidth + 12, ' ');
  for (int decade = -2; decade <= 4; decade += 2) {
    const std::string text = decade == -2 ? "0.01" : decade == 0 ? "1" : decade == 2 ? "100" : "10^4";
    const auto end = static_cast<std::size_t>(10 + col(decade) + 1);
    labels.replace(end - text.size(), text.size(), text);
  }
  out += labels.substr(0, 10 + kWidth) + " FLOP/B\n";
  return out + legend;
}


std::string render_roofline_json(const RooflineResult& result, const Table& rows, const RenderOptions& options) {
  JsonWriter json(0);
  json.begin_object().key("summary").begin_array();
  for (const auto& line : roofline_summary_lines(result)) json.value(line);
  json.end_array().key("rows").raw(table_json(rows, options));
  write_notes_json(json.key("notes"), roofline_notes(result));
  json.end_object();
  return json.finish();
}

std::string render_roofline_text(const RooflineResult& result, const Table& rows, const RenderOptions& options) {
  std::ostringstream text;
  for (const auto& line : roofline_summary_lines(result)) text << line << '\n';
  text << '\n';
  render(text, rows, options);
  const std::string chart = roofline_text_chart(result, 8);
  if (!chart.empty()) text << '\n' << chart;
  for (const auto& note : roofline_notes(result)) text << "note: " << note.text << '\n';
  return text.str();
}

}  // namespace kernscope
