#include "render/html/diff_page.hpp"

#include <algorithm>
#include <cmath>

#include "render/html/page.hpp"
#include "render/html/table.hpp"
#include "render/html/waterfall_chart.hpp"

namespace kernscope {
namespace {

using namespace html;

constexpr std::size_t kWaterfallRows = 15;  // the largest changes; the rest as one row
constexpr std::size_t kTableRows = 200;

// A waterfall over `rows` (largest |delta| first): from the sum of their A totals to the sum of
// their B totals, so the bars add up exactly.
std::string waterfall_of(const std::string& id, const std::string& what, const DiffResult& diff, const std::vector<DiffRow>& rows) {
  double total_a = 0;
  std::vector<WaterfallStep> steps;
  double rest = 0;
  std::size_t rest_rows = 0;
  for (const auto& r : rows) {
    total_a += static_cast<double>(r.total_a);
    if (steps.size() < kWaterfallRows) {
      steps.push_back({r.name + (r.is_new() ? " (new)" : r.is_missing() ? " (missing)" : ""), static_cast<double>(r.delta())});
    } else {
      rest += static_cast<double>(r.delta());
      ++rest_rows;
    }
  }
  if (rest_rows) steps.push_back({"the other " + std::to_string(rest_rows) + " " + what, rest});
  return waterfall_chart(id, "From A's to B's GPU time by " + what, "A: " + diff.label_a, total_a, steps, "B: " + diff.label_b);
}

}  // namespace

std::string render_diff_html(const DiffResult& diff, const std::vector<Table>& tables) {
  Page page("kernscope diff");
  page.subtitle("A: " + diff.label_a + (diff.runs_a > 1 ? " (" + std::to_string(diff.runs_a) + " runs)" : ""));
  page.subtitle("B: " + diff.label_b + (diff.runs_b > 1 ? " (" + std::to_string(diff.runs_b) + " runs)" : ""));
  page.subtitle("Kernels matched by " + diff.identity);
  std::string summary = bullet_list(diff_headline_lines(diff));
  page.section("summary", "What changed", summary);
  std::string charts;
  if (!diff.classes.empty()) {
    charts += figure(waterfall_of("chart-diff-classes", "classes", diff, diff.classes),
                     "From A's GPU time to B's, one operation class at a time (largest changes first); red: more time in B, green: less.");
  }
  if (!diff.kernels.empty()) {
    charts += figure(waterfall_of("chart-diff-kernels", "kernels", diff, diff.kernels),
                     "The same by kernel (matched by " + diff.identity + "): the " + std::to_string(std::min(kWaterfallRows, diff.kernels.size())) +
                         " largest changes, then the rest as one bar.");
  }
  page.section("waterfall", "Where the change comes from", charts.empty() ? paragraph("Nothing to compare.", "note") : charts);
  for (const auto& t : tables) {
    if (t.rows.empty()) continue;
    const std::size_t shown = std::min(kTableRows, t.rows.size());
    const std::string heading = (t.title.empty() ? t.report : t.title) + (shown < t.rows.size() ? " (the first " + std::to_string(shown) + " of " + std::to_string(t.rows.size()) + ")" : "");
    page.section("section-" + t.report, heading, sortable_table("table-" + t.report, t, kTableRows).finish());
  }
  return page.finish();
}

}  // namespace kernscope
