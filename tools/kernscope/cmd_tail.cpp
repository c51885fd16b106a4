// kernscope tail: tail-aware statistics per kernel, API call or NVTX range.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "kernscope/tail.hpp"
#include "kernscope/trace_filter.hpp"

namespace kernscope::cli {
namespace {

struct TailOptions {
  std::string trace;
  std::string by = "kernel";
  std::size_t limit = 20;
  std::string format = "table";
  std::string time_unit = "ns";
};

int run_tail(const TailOptions& o) {
  auto subject = parse_tail_subject(o.by);
  if (!subject) return fail(subject.error());
  auto format = parse_format(o.format);
  if (!format) return fail(format.error());
  auto unit = parse_time_unit(o.time_unit);
  if (!unit) return fail(unit.error());
  OpenOptions open_options;
  open_options.kinds = *subject == TailSubject::kKernel ? bit(EventKind::kKernels)
                       : *subject == TailSubject::kApi  ? bit(EventKind::kApiCalls)
                                                        : bit(EventKind::kNvtx);
  open_options.detail_kinds = 0;
  auto trace = open_trace(o.trace, open_options);
  if (!trace) return fail(trace.error());
  Trace& loaded = keep_until_exit(std::move(*trace));
  auto result = tail_statistics(loaded, *subject);
  if (!result) return fail(result.error());
  if (result->by_total.empty()) {
    std::cerr << "kernscope: tail: no events of that kind in the trace\n";
    return 0;
  }
  const RenderOptions render_options{*format, *unit};
  const Table by_total = tail_table(result->by_total, *subject, false, o.limit);
  const Table by_score = tail_table(result->by_tail_score, *subject, true, o.limit);
  if (*format == Format::kJson) {
    // {"by_total": [...], "tail_candidates": [...]}: the two views of the same rows.
    std::cout << "{\"by_total\": ";
    render(std::cout, by_total, render_options);
    std::cout << ", \"tail_candidates\": ";
    render(std::cout, by_score, render_options);
    std::cout << "}\n";
  } else if (*format == Format::kTable) {
    render(std::cout, by_total, render_options);
    render(std::cout, by_score, render_options);
  } else {
    render(std::cout, by_total, render_options);  // CSV/TSV: one table, by total time
  }
  return 0;
}

}  // namespace

Command add_tail(CLI::App& app) {
  auto o = std::make_shared<TailOptions>();
  auto* cmd = app.add_subcommand("tail", "Tail statistics (p50/p95/p99/max, tail score) per kernel, API call or NVTX range");
  cmd->add_option("--by", o->by, "kernel, api or nvtx")->capture_default_str();
  cmd->add_option("--limit", o->limit, "rows per table (0: all)")->capture_default_str();
  cmd->add_option("-f,--format", o->format, "table, csv, tsv or json")->capture_default_str();
  cmd->add_option("--timeunit", o->time_unit, "ns, us, ms or s")->capture_default_str();
  cmd->add_option("trace", o->trace, "trace file")->required();
  return [o] { return run_tail(*o); };
}

}  // namespace kernscope::cli
