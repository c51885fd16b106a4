#include "analyses/spec/spec.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "analyses/spec/spec_tokens.hpp"
#include "base/pattern_table.hpp"

extern const char* const kernscope_builtin_spec_markers;

namespace kernscope {
namespace {

struct Range {
  TimeNs start = 0, end = 0;
  SpecMarker role = SpecMarker::kDraft;
  StringId text = kNoString;
};

// Per thread, ranges of each role in start order with the nested ones of the same role dropped
// (get_candidates inside a wrapper of the same name, a span inside the Python function).
std::vector<Range> outermost(std::vector<Range> v) {
  std::sort(v.begin(), v.end(), [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
  std::vector<Range> out;
  for (const Range& r : v) {
    if (!out.empty() && r.start < out.back().end) continue;
    out.push_back(r);
  }
  return out;
}

std::string engine_of(std::string_view text) {
  if (text.find("candidate_generator") != std::string_view::npos) return "Hugging Face assisted generation";
  if (text.find("eagle_worker") != std::string_view::npos || text.rfind("step[", 0) == 0) return "SGLang EAGLE";
  return "vLLM";
}

}  // namespace

Result<SpecMarkers> SpecMarkers::parse(const std::string& text, const std::string& source) {
  SpecMarkers markers;
  auto rows = read_pattern_rows(text, source, "ROLE");
  if (!rows) return std::unexpected(rows.error());
  for (const auto& row : *rows) {
    SpecMarker marker;
    if (row.name == "draft") marker = SpecMarker::kDraft;
    else if (row.name == "step") marker = SpecMarker::kStep;
    else if (row.name == "verify_end") marker = SpecMarker::kVerifyEnd;
    else return make_error(ErrorCode::kInvalidArgument, row.where + ": unknown role '" + row.name + "' (draft, step, verify_end)");
    auto matcher = TextPattern::compile(row.pattern, {});
    if (!matcher) return make_error(ErrorCode::kInvalidArgument, row.where + ": invalid regular expression: " + matcher.error());
    markers.rules_.push_back({marker, std::move(*matcher)});
  }
  return markers;
}

const SpecMarkers& SpecMarkers::builtin() {
  static const SpecMarkers markers = [] {
    auto parsed = parse(kernscope_builtin_spec_markers, "data/spec_markers.tsv");
    return parsed ? std::move(*parsed) : SpecMarkers{};  // the built-in table is tested to parse
  }();
  return markers;
}

std::optional<SpecMarker> SpecMarkers::role_of(std::string_view text) const {
  for (const auto& rule : rules_) {
    if (rule.matcher.search(text)) return rule.role;
  }
  return std::nullopt;
}

Result<SpecAnalysis> analyze_spec(const Trace& trace, const SpecMarkers& markers) {
  SpecAnalysis out;
  const auto& n = trace.nvtx;
  // Each distinct text is matched once; operators (cpu_op) are never markers.
  std::unordered_map<StringId, std::optional<SpecMarker>> role_by_text;
  std::map<std::int64_t, std::vector<Range>> by_thread[3];
  std::int64_t counts[3] = {0, 0, 0};
  StringId first_text = kNoString;
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (n.domain_id[i] == kKinetoCpuOpDomain || n.text[i] == kNoString) continue;
    const bool mark = n.end_ns[i] == kNoTime;
    if (mark || !is_nvtx_range(n.event_type[i])) continue;
    auto it = role_by_text.find(n.text[i]);
    if (it == role_by_text.end()) it = role_by_text.emplace(n.text[i], markers.role_of(trace.strings.get(n.text[i]))).first;
    if (!it->second) continue;
    const auto r = static_cast<std::size_t>(*it->second);
    by_thread[r][n.global_tid[i]].push_back({n.start_ns[i], n.end_ns[i], *it->second, n.text[i]});
    ++counts[r];
    if (*it->second == SpecMarker::kDraft && first_text == kNoString) first_text = n.text[i];
  }
  const auto drafts_total = counts[static_cast<std::size_t>(SpecMarker::kDraft)];
  if (drafts_total == 0) {
    out.evidence = "no draft ranges (data/spec_markers.tsv: Hugging Face's get_candidates, SGLang's EAGLE draft, vLLM's "
                   "proposers) in this trace";
    return out;
  }
  out.present = true;
  out.engine = engine_of(trace.strings.get(first_text));
  const spec::HfVerifyTokens tokens(trace);
  bool any_shapes = false;
  for (auto& [thread, list] : by_thread[static_cast<std::size_t>(SpecMarker::kDraft)]) {
    const std::vector<Range> drafts = outermost(list);
    const auto& ends_in = by_thread[static_cast<std::size_t>(SpecMarker::kVerifyEnd)];
    const auto& steps_in = by_thread[static_cast<std::size_t>(SpecMarker::kStep)];
    if (auto e = ends_in.find(thread); e != ends_in.end()) {
      // Drafting, then a verify that ends where the verify-end mark starts (Hugging Face).
      std::vector<Range> ends = e->second;
      std::sort(ends.begin(), ends.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
      for (std::size_t d = 0; d < drafts.size(); ++d) {
        auto end = std::lower_bound(ends.begin(), ends.end(), drafts[d].end, [](const Range& r, TimeNs t) { return r.start < t; });
        if (end == ends.end() || (d + 1 < drafts.size() && end->start > drafts[d + 1].start)) continue;  // no verify closed
        SpecStep s;
        s.thread = thread;
        s.start = drafts[d].start;
        s.end = end->start;
        s.drafts = 1;
        s.draft_ns = drafts[d].end - drafts[d].start;
        s.verify_ns = s.end - drafts[d].end;
        const spec::VerifyTokens t = tokens.read(thread, drafts[d].end, end->start);
        s.verify_positions = t.positions;
        if (t.proposed >= 0 && t.emitted >= 1) {  // a verify keeps at least the target's own token
          any_shapes = true;
          s.proposed = t.proposed;
          s.emitted = t.emitted;
          s.accepted = t.emitted - 1;
          s.prefill = t.positions > t.proposed + 1;
        }
        out.steps.push_back(s);
      }
    } else if (auto st = steps_in.find(thread); st != steps_in.end()) {
      // Step windows; the drafts inside one or since the step before are its drafting.
      const std::vector<Range> windows = outermost(st->second);
      std::size_t d = 0;
      for (const Range& w : windows) {
        SpecStep s;
        s.thread = thread;
        s.start = w.start;
        s.end = w.end;
        std::int64_t inside = 0;
        for (; d < drafts.size() && drafts[d].start < w.end; ++d) {
          ++s.drafts;
          s.draft_ns += drafts[d].end - drafts[d].start;
          // The part inside the window is not the verify's; a draft before it widens the step.
          inside += std::max<TimeNs>(0, std::min(drafts[d].end, w.end) - std::max(drafts[d].start, w.start));
          s.start = std::min(s.start, drafts[d].start);
        }
        s.verify_ns = (w.end - w.start) - inside;
        out.steps.push_back(s);
      }
    } else {
      out.notes.push_back({"drafts_without_verify", NoteSeverity::kInfo,
                           std::to_string(drafts.size()) + " draft ranges on a thread with no verify step or verify-end mark: drafting counted, "
                                                           "no steps formed",
                           static_cast<std::int64_t>(drafts.size())});
    }
  }
  std::sort(out.steps.begin(), out.steps.end(), [](const SpecStep& a, const SpecStep& b) { return a.start < b.start; });
  for (std::size_t i = 0; i < out.steps.size(); ++i) out.steps[i].index = static_cast<std::int64_t>(i);
  out.evidence = std::to_string(drafts_total) + " draft ranges (" + out.engine + "'s markers in data/spec_markers.tsv), " +
                 std::to_string(out.steps.size()) + " verify steps";
  out.tokens_from = any_shapes ? "operator shapes (record_shapes): after each verify, transformers slices the candidates off the sequence "
                                 "(aten::slice from the current length to the end: proposed) and appends the tokens it keeps (aten::cat "
                                 "of the sequence and [B, accepted + 1]: emitted)"
                  : out.engine == "Hugging Face assisted generation"
                      ? "not in this trace: Hugging Face's verify shows its tokens only in operator shapes (record_shapes=True)"
                      : "not in this trace: " + out.engine + " counts accepted tokens on the GPU and reports them in its logs and "
                        "metrics, which no trace records";

  // Totals, time per emitted token over decode verifies (a prefill verify also fed the prompt),
  // and the verify's cost per position fitted over decode verifies.
  std::int64_t decode_ns = 0, decode_emitted = 0;
  double n_fit = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::map<std::int64_t, int> positions_seen;
  for (const SpecStep& s : out.steps) {
    out.draft_ns += s.draft_ns;
    out.verify_ns += s.verify_ns;
    if (s.proposed < 0) continue;
    ++out.steps_with_tokens;
    out.proposed += s.proposed;
    out.accepted += s.accepted;
    out.emitted += s.emitted;
    if (s.prefill) continue;
    decode_ns += s.draft_ns + s.verify_ns;
    decode_emitted += s.emitted;
    if (s.verify_positions > 0) {
      const auto x = static_cast<double>(s.verify_positions), y = static_cast<double>(s.verify_ns) / 1e6;
      n_fit += 1;
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
      ++positions_seen[s.verify_positions];
    }
  }
  if (out.proposed > 0) out.acceptance = static_cast<double>(out.accepted) / static_cast<double>(out.proposed);
  if (decode_emitted > 0) out.ms_per_emitted = static_cast<double>(decode_ns) / 1e6 / static_cast<double>(decode_emitted);
  const double line_at_1 = [&] {
    if (positions_seen.size() < 2) return 0.0;
    const double slope = (n_fit * sxy - sx * sy) / (n_fit * sxx - sx * sx);
    return (sy - slope * sx) / n_fit + slope;
  }();
  if (positions_seen.size() >= 2 && line_at_1 > 0) {
    const double slope = (n_fit * sxy - sx * sy) / (n_fit * sxx - sx * sx);
    out.verify_ms_per_position = slope;
    out.plain_decode_ms = line_at_1;
    out.plain_decode_from = "the verify time fitted over " + std::to_string(static_cast<int>(n_fit)) +
                            " decode verifies of " + std::to_string(positions_seen.size()) +
                            " different lengths, at 1 position (a plain decode step is a verify of nothing)";
    if (positions_seen.count(1)) out.plain_decode_from += "; the trace holds verifies of 1 position, which are plain decode steps";
    if (out.ms_per_emitted && *out.ms_per_emitted > 0 && *out.plain_decode_ms > 0) out.speedup = *out.plain_decode_ms / *out.ms_per_emitted;
  } else if (positions_seen.size() >= 2) {
    out.plain_decode_from = "not estimated: the line through the decode verifies' times falls to zero or below at 1 position "
                            "(their times do not grow with the positions they feed)";
  } else if (out.steps_with_tokens > 0) {
    out.plain_decode_from = "not estimated: the decode verifies fed one length only, so the cost per position is not measured";
  }

  // Drafting on the critical path: how far into each draft range the GPU work that started before
  // it (the target's, still queued) ran: the latest end of the kernels started before the range.
  // Only the drafting process's kernels count (a tensor-parallel peer's are not its target's work),
  // unless the trace does not say which process launched a kernel (none carries the draft's).
  const auto& k = trace.kernels;
  struct Timeline {
    std::vector<std::pair<TimeNs, TimeNs>> kernels;
    std::vector<TimeNs> latest_end;
  };
  std::map<std::int64_t, Timeline> by_process;  // process_key -> its kernels; kAnyProcess: all
  constexpr std::int64_t kAnyProcess = -1;
  for (RowIndex i = 0; i < k.size(); ++i) {
    by_process[k.global_pid[i]].kernels.emplace_back(k.start_ns[i], k.end_ns[i]);
    by_process[kAnyProcess].kernels.emplace_back(k.start_ns[i], k.end_ns[i]);
  }
  for (auto& [process, t] : by_process) {
    std::sort(t.kernels.begin(), t.kernels.end());
    t.latest_end.resize(t.kernels.size());
    for (std::size_t i = 0; i < t.kernels.size(); ++i) t.latest_end[i] = std::max(t.kernels[i].second, i ? t.latest_end[i - 1] : INT64_MIN);
  }
  std::int64_t overlapped = 0, drafting = 0;
  for (const auto& [thread, list] : by_thread[static_cast<std::size_t>(SpecMarker::kDraft)]) {
    auto own = by_process.find(process_key(thread));
    const Timeline* t = own != by_process.end() ? &own->second : nullptr;
    if (!t) {
      auto any = by_process.find(kAnyProcess);
      t = any != by_process.end() ? &any->second : nullptr;
    }
    for (const Range& d : outermost(list)) {
      drafting += d.end - d.start;
      if (!t) continue;
      const auto started = static_cast<std::size_t>(
          std::lower_bound(t->kernels.begin(), t->kernels.end(), std::make_pair(d.start, INT64_MIN)) - t->kernels.begin());
      if (started > 0) overlapped += std::clamp<std::int64_t>(t->latest_end[started - 1] - d.start, 0, d.end - d.start);
    }
  }
  out.draft_overlapped_ns = overlapped;
  out.draft_on_critical_path = drafting > 0 && static_cast<double>(overlapped) < 0.1 * static_cast<double>(drafting);
  return out;
}

Table spec_steps_table(const SpecAnalysis& spec) {
  Table t;
  t.report = "spec_steps";
  t.title = "Speculative Decoding: Verify Steps";
  t.columns = {{"Step"}, {"Start", Unit::kTimestamp}, {"Draft", Unit::kDuration}, {"Verify", Unit::kDuration}, {"Drafts"},
               {"Verify Positions"}, {"Proposed"}, {"Accepted"}, {"Emitted"}, {"Prefill"}};
  auto shown = [](std::int64_t v) { return v < 0 ? Cell{} : Cell{v}; };
  for (const auto& s : spec.steps) {
    t.rows.push_back({s.index, s.start, s.draft_ns, s.verify_ns, s.drafts, shown(s.verify_positions), shown(s.proposed),
                      shown(s.accepted), shown(s.emitted), s.proposed < 0 ? Cell{} : Cell{std::string(s.prefill ? "yes" : "no")}});
  }
  return t;
}

}  // namespace kernscope
