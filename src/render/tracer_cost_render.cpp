#include "render/tracer_cost_render.hpp"

#include <fmt/format.h>

namespace kernscope {
namespace {

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

bool estimated(const TracerCostEstimate& e) { return e.calibration && e.not_estimated.empty(); }

}  // namespace

std::vector<std::string> tracer_cost_sentences(const TracerCostEstimate& e) {
  std::vector<std::string> out;
  if (!e.kernscope_trace) return out;
  if (estimated(e)) {
    out.push_back(fmt::format("traced host times inflated by about {:.0f} % ({:.0f} launches per step x {:.1f} us, calibrated on {}): "
                              "{}, {} traced, about {} without the tracer{}",
                              e.inflation_percent, e.launches, e.calibration->us_per_launch, e.calibration->host, e.basis, ms(e.host_ns),
                              ms(e.host_ns - e.added_ns), e.host_cpu.empty() ? "" : " (traced on " + e.host_cpu + ")"));
  } else {
    out.push_back("tracer cost not estimated: " + e.not_estimated + "; traced host times include an unknown cost of the tracer");
  }
  if (e.program_calls + e.other_calls > 0) {
    std::string sites;
    for (const auto& s : e.by_site) sites += fmt::format("{}{} {} x, {}", sites.empty() ? "" : "; ", s.site, s.calls, ms(static_cast<double>(s.total_ns)));
    std::string line = fmt::format("the tracer's own code on the program's threads: {} in {} calls ({})", ms(static_cast<double>(e.program_ns)),
                                   e.program_calls, sites.empty() ? "none" : sites);
    if (e.total_launches > 0) line += fmt::format(", {:.1f} ns per launch", static_cast<double>(e.program_ns) / static_cast<double>(e.total_launches));
    if (e.other_calls > 0) line += fmt::format("; on CUPTI's threads {} in {} calls", ms(static_cast<double>(e.other_ns)), e.other_calls);
    if (e.timing_cost_ns >= 0) {
      line += fmt::format("; timing it adds about {} ns per call ({} in all)", e.timing_cost_ns,
                          ms(static_cast<double>(e.timing_cost_ns * (e.program_calls + e.other_calls))));
    }
    out.push_back(line);
  } else {
    out.push_back("the tracer's own time on the program's threads is not in this trace (written by a tracer older than its cost measurement)");
  }
  if (e.overhead_loaded) {
    out.push_back(fmt::format("CUPTI's overhead records: {} ({})", e.overhead_records, ms(static_cast<double>(e.overhead_ns))));
  }
  return out;
}

void write_tracer_cost_json(JsonWriter& json, const TracerCostEstimate& e) {
  if (!e.kernscope_trace) {
    json.null();
    return;
  }
  json.begin_object();
  json.key("estimate");
  if (estimated(e)) {
    json.begin_object()
        .member("inflation_percent", e.inflation_percent)
        .member("basis", e.basis)
        .member("launches", e.launches)
        .member("us_per_launch", e.calibration->us_per_launch)
        .member("calibrated_on", e.calibration->host)
        .member("calibration_source", e.calibration->source)
        .member("traced_host_ns", e.host_ns)
        .member("without_tracer_ns", e.host_ns - e.added_ns)
        .member("traced_on", e.host_cpu)
        .end_object();
  } else {
    json.null();
  }
  json.member("not_estimated_why", e.not_estimated);
  json.key("measured").begin_object();
  json.member("program_calls", e.program_calls).member("program_ns", e.program_ns);
  json.member("other_calls", e.other_calls).member("other_ns", e.other_ns).member("total_launches", e.total_launches);
  json.key("timing_cost_ns");
  if (e.timing_cost_ns >= 0) json.value(e.timing_cost_ns);
  else json.null();
  json.key("by_site").begin_array();
  for (const auto& s : e.by_site) json.begin_object().member("site", s.site).member("calls", s.calls).member("ns", s.total_ns).end_object();
  json.end_array().end_object();
  json.key("cupti_overhead");
  if (e.overhead_loaded) json.begin_object().member("records", e.overhead_records).member("ns", e.overhead_ns).end_object();
  else json.null();
  json.key("sentences").begin_array();
  for (const auto& line : tracer_cost_sentences(e)) json.value(line);
  json.end_array().end_object();
}

}  // namespace kernscope
