#include "render/diff_render.hpp"

#include <cstdint>
#include <sstream>
#include <tuple>

#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope {
namespace {

Table first_rows(Table t, std::size_t limit) {
  if (limit > 0 && t.rows.size() > limit) t.rows.resize(limit);
  return t;
}

// The kernels only one side has, largest first, as lines.
std::string only_on_one_side(const DiffResult& d, bool added, std::size_t limit) {
  std::ostringstream out;
  std::size_t n = 0, total = 0;
  for (const auto& r : d.kernels) {
    if (added ? !r.is_new() : !r.is_missing()) continue;
    ++total;
    if (limit == 0 || n < limit) {
      out << "  " << (added ? r.count_b : r.count_a) << " x, " << (added ? r.total_b : r.total_a) << " ns  " << r.name << '\n';
      ++n;
    }
  }
  if (total == 0) return {};
  std::string head = added ? "\nNew kernels (only in B): " : "\nMissing kernels (only in A): ";
  return head + std::to_string(total) + (total > n ? " (largest " + std::to_string(n) + " below)" : "") + "\n" + out.str();
}

}  // namespace

std::string render_diff_json(const DiffDocument& d, const RenderOptions& options) {
  const DiffResult& diff = d.diff;
  JsonWriter json(2);
  json.begin_object();
  for (const auto& [key, label, side] : {std::tuple{"a", diff.label_a, &d.a}, std::tuple{"b", diff.label_b, &d.b}}) {
    json.key(key).begin_object().member("label", label).key("runs").begin_array();
    for (const auto& r : side->runs) {
      json.begin_object().member("path", r.path).member("source", r.source_format).key("gpus").begin_array();
      for (const auto& g : r.gpus) json.value(g);
      json.end_array().end_object();
    }
    json.end_array().end_object();
  }
  json.member("identity", diff.identity).member("nothing_in_common", diff.nothing_in_common);
  write_notes_json(json.key("notes"), diff.notes);
  json.key("headline").begin_object().member("total_kernel_ns_a", diff.total_a).member("total_kernel_ns_b", diff.total_b);
  json.key("contributors").begin_array();
  for (const auto& c : diff.headline) {
    json.begin_object().member("kind", c.kind).member("name", c.name).member("delta_ns", c.delta_ns)
        .member("share_percent", c.share).end_object();
  }
  json.end_array().key("lines").begin_array();
  for (const auto& line : diff_headline_lines(diff)) json.value(line);
  json.end_array().end_object();
  static const char* keys[] = {"phases", "classes", "kernels", "kernel_tails", "nvtx"};
  for (std::size_t i = 0; i < 5; ++i) json.key(keys[i]).raw(table_json(d.tables[i], options));
  json.key("gates").begin_array();
  for (const auto& v : d.verdicts) {
    json.begin_object().member("expression", v.condition.expression).member("metric", v.condition.metric);
    if (!v.condition.subject.empty()) json.member("subject", v.condition.subject);
    json.member("a_ns", v.a).member("b_ns", v.b).member("change", v.change)
        .member("change_unit", std::string(v.condition.relative ? "%" : "ns")).member("threshold", v.condition.threshold)
        .key("interval").begin_array().value(v.low).value(v.high).end_array()
        .member("confidence", d.bootstrap.confidence).member("resamples", d.bootstrap.resamples)
        .member("seed", static_cast<std::int64_t>(d.bootstrap.seed)).member("noise_from", v.noise_from)
        .member("holds", v.holds).member("beyond_noise", v.beyond_noise).member("failed", v.failed)
        .member("evidence", v.evidence).end_object();
  }
  json.end_array().member("failed", d.failed).end_object();
  return json.finish();
}

std::string render_diff_text(const DiffDocument& d, const RenderOptions& options, std::size_t limit) {
  const DiffResult& diff = d.diff;
  std::ostringstream text;
  text << "kernscope diff  A: " << diff.label_a << "   B: " << diff.label_b << "\n\n";
  for (const auto& line : diff_headline_lines(diff)) text << line << '\n';
  text << '\n';
  for (std::size_t i : {0, 1, 2}) render(text, first_rows(d.tables[i], limit), options);
  text << only_on_one_side(diff, true, limit) << only_on_one_side(diff, false, limit);
  if (!d.tables[4].rows.empty()) {
    text << '\n';
    render(text, first_rows(d.tables[4], limit), options);
  }
  if (!d.verdicts.empty()) text << "\nGates:\n";
  for (const auto& v : d.verdicts) text << "  " << v.evidence << '\n';
  return text.str();
}

std::string render_compare_json(const Comparison& c, const RenderOptions& options) {
  JsonWriter json(2);
  json.begin_object().key("labels").begin_array();
  for (const auto& l : c.labels) json.value(l);
  json.end_array();
  write_notes_json(json.key("notes"), c.notes);
  json.key("steps").raw(table_json(c.steps, options)).key("classes").raw(table_json(c.classes, options)).end_object();
  return json.finish();
}

std::string render_compare_text(const Comparison& c, const RenderOptions& options) {
  std::ostringstream text;
  render(text, c.steps, options);
  render(text, c.classes, options);
  for (const auto& n : c.notes) text << "Note: " << n.text << '\n';
  return text.str();
}

}  // namespace kernscope
