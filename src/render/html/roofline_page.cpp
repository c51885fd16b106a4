#include "render/html/roofline_page.hpp"

#include <algorithm>

#include "render/html/html_text.hpp"
#include "render/html/page.hpp"
#include "render/html/roofline_chart.hpp"
#include "render/roofline_render.hpp"
#include "render/html/svg.hpp"
#include "render/html/table.hpp"

namespace kernscope {
namespace {

using namespace html;

constexpr std::size_t kMaxPoints = 300;  // the rows with the most time

std::string roof_color(Roof roof) {
  switch (roof) {
    case Roof::kMemory: return "#4e79a7";
    case Roof::kCompute: return "#f28e2b";
    case Roof::kLatency: return "#b07aa1";
    case Roof::kUnknown: break;
  }
  return "#9c755f";
}

// Compute roofs worth drawing: the 16-bit, 8-bit and 32-bit float peaks the GPU has.
std::vector<ComputeRoof> compute_roofs(const GpuPeaks& peaks) {
  std::vector<ComputeRoof> roofs;
  for (Precision p : {Precision::kFp8, Precision::kBf16, Precision::kTf32, Precision::kFp32}) {
    const auto peak = peaks.peak(p);
    if (!peak || *peak <= 0) continue;
    if (std::any_of(roofs.begin(), roofs.end(), [&](const ComputeRoof& r) { return r.flops_per_s == *peak; })) continue;
    roofs.push_back({std::string(precision_name(p)) + " " + fixed(*peak / 1e12, 0) + " TFLOP/s", *peak});
  }
  return roofs;
}

}  // namespace

std::string render_roofline_html(const RooflineResult& result, const std::string& trace_path) {
  Page page("kernscope roofline");
  page.subtitle("Trace: " + trace_path);
  page.subtitle("Peaks: " + (result.peaks.note.empty() ? std::string("none matched") : result.peaks.note));
  std::string summary = bullet_list(roofline_summary_lines(result));
  if (!result.headline.empty()) {
    std::vector<std::string> headline;
    for (const auto& h : result.headline) headline.push_back(roofline_headline_line(h, result.latency_floor_ns));
    summary += "<h3>Headline</h3>" + bullet_list(headline);
  }
  page.section("summary", "Summary", summary);

  std::vector<const RooflineRow*> rows;
  for (const auto& r : result.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const RooflineRow* a, const RooflineRow* b) { return a->time_ns > b->time_ns; });
  std::vector<RooflinePoint> points;
  std::size_t without_flops = 0;
  std::int64_t without_flops_ns = 0;
  for (const auto* r : rows) {
    if (!r->has_work || r->time_ns <= 0) continue;
    if (r->flops <= 0 || r->bytes <= 0) {
      ++without_flops;
      without_flops_ns += r->time_ns;
      continue;
    }
    if (points.size() >= kMaxPoints) continue;
    const double seconds = static_cast<double>(r->time_ns) * 1e-9;
    points.push_back({r->name, r->flops / r->bytes, r->flops / seconds, roof_color(r->roof),
                      r->name + "\n" + std::to_string(r->count) + " calls, " + duration(static_cast<double>(r->time_ns)) + "; " +
                          fixed(r->flops / seconds / 1e12, 2) + " TFLOP/s, " + fixed(r->bytes / seconds / 1e9, 1) + " GB/s; " +
                          std::string(roof_name(r->roof)) + "-bound, " + fixed(r->percent_of_roof(), 1) + " % of roof"});
  }
  std::string chart_body;
  if (!result.peaks.peaks) {
    chart_body = paragraph("No roofline chart: no peaks for this GPU (give them with --peaks FILE).", "note");
  } else if (points.empty()) {
    chart_body = paragraph("No roofline chart: no row has both FLOPs and bytes from a source.", "note");
  } else {
    const auto& peaks = *result.peaks.peaks;
    std::vector<std::pair<std::string, std::string>> legend;
    for (Roof roof : {Roof::kMemory, Roof::kCompute, Roof::kLatency}) legend.push_back({std::string(roof_name(roof)) + "-bound", roof_color(roof)});
    std::string caption = "Each dot is a row (" + std::to_string(points.size()) +
                          " with FLOPs and bytes, by time) at its arithmetic intensity and achieved FLOP/s; grey lines: the memory roof "
                          "and the compute roofs of " + peaks.name + " (" + peaks.source + "). Colour: the binding roof (";
    for (std::size_t i = 0; i < legend.size(); ++i) caption += (i ? ", " : "") + legend[i].first + " " + (i == 0 ? "blue" : i == 1 ? "orange" : "purple");
    caption += ").";
    if (without_flops) {
      caption += ' ';  // not " " + string&&: GCC 12's -Wrestrict false positive
      caption += std::to_string(without_flops) + " rows with bytes but no FLOPs (" + duration(static_cast<double>(without_flops_ns)) +
                 ") are not drawn; their GB/s is in the table.";
    }
    chart_body = figure(roofline_chart("chart-roofline", "Roofline: achieved FLOP/s against arithmetic intensity", peaks.bandwidth_bytes_per_s,
                                       compute_roofs(peaks), points),
                        caption);
  }
  page.section("chart", "Roofline", chart_body);
  page.section("rows", "Rows", sortable_table("table-roofline", roofline_table(result, 0)).finish());
  if (const auto notes = roofline_notes(result); !notes.empty()) page.section("notes", "Notes", bullet_list(note_texts(notes)));
  return page.finish();
}

}  // namespace kernscope
