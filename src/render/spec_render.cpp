#include "render/spec_render.hpp"

#include <cstdio>
#include <sstream>

#include "render/json_writer.hpp"
#include "render/notes_json.hpp"

namespace kernscope {
namespace {

void optional_member(JsonWriter& json, const char* key, const std::optional<double>& v) {
  json.key(key);
  if (v) json.value(*v);
  else json.null();
}

}  // namespace

// {"present", "evidence", "engine", "tokens_from", "steps": [{"step", "start_ns", "draft_ns",
// "verify_ns", "drafts", "verify_positions", "proposed", "accepted", "emitted", "prefill"}],
// "totals": {...}, "plain_decode": {...}, "drafting": {...}, "notes"}; -1 / null: not shown.
std::string render_spec_json(const SpecAnalysis& s) {
  JsonWriter json(0);
  json.begin_object().member("present", s.present).member("evidence", s.evidence).member("engine", s.engine);
  json.member("tokens_from", s.tokens_from).key("steps").begin_array();
  for (const auto& st : s.steps) {
    json.begin_object().member("step", st.index).member("start_ns", st.start).member("draft_ns", st.draft_ns).member("verify_ns", st.verify_ns);
    json.member("drafts", st.drafts).member("verify_positions", st.verify_positions).member("proposed", st.proposed);
    json.member("accepted", st.accepted).member("emitted", st.emitted).member("prefill", st.prefill).end_object();
  }
  json.end_array().key("totals").begin_object().member("steps", static_cast<std::int64_t>(s.steps.size()));
  json.member("steps_with_tokens", s.steps_with_tokens).member("proposed", s.proposed).member("accepted", s.accepted);
  json.member("emitted", s.emitted);
  optional_member(json, "acceptance", s.acceptance);
  optional_member(json, "ms_per_emitted_token", s.ms_per_emitted);
  json.member("draft_ns", s.draft_ns).member("verify_ns", s.verify_ns).end_object();
  json.key("plain_decode").begin_object();
  optional_member(json, "ms", s.plain_decode_ms);
  optional_member(json, "verify_ms_per_position", s.verify_ms_per_position);
  optional_member(json, "speedup", s.speedup);
  json.member("from", s.plain_decode_from).end_object();
  json.key("drafting").begin_object().member("on_critical_path", s.draft_on_critical_path).member("overlapped_ns", s.draft_overlapped_ns);
  json.end_object();
  write_notes_json(json.key("notes"), s.notes);
  json.end_object();
  return json.finish();
}

std::string render_spec_text(const SpecAnalysis& s) {
  std::ostringstream text;
  char line[512];
  text << "\nSpeculative decoding: " << s.evidence << "\nTokens: " << s.tokens_from << "\n";
  if (s.acceptance) {
    std::snprintf(line, sizeof line, "Accepted %lld of %lld proposed (%.1f %%), %lld emitted in %lld verify steps (%.2f accepted per verify)\n",
                  static_cast<long long>(s.accepted), static_cast<long long>(s.proposed), *s.acceptance * 100,
                  static_cast<long long>(s.emitted), static_cast<long long>(s.steps_with_tokens),
                  static_cast<double>(s.accepted) / static_cast<double>(s.steps_with_tokens));
    text << line;
  }
  if (s.ms_per_emitted) {
    std::snprintf(line, sizeof line, "Decode: %.3f ms per emitted token (drafting and verify)", *s.ms_per_emitted);
    text << line;
    if (s.plain_decode_ms && s.speedup) {
      std::snprintf(line, sizeof line, " against %.3f ms for a plain decode step: %.2fx %s; one more verify position costs %.3f ms",
                    *s.plain_decode_ms, *s.speedup, *s.speedup >= 1 ? "faster" : "(slower)", *s.verify_ms_per_position);
      text << line;
    }
    text << "\n";
  }
  if (!s.plain_decode_from.empty()) text << "Plain decode: " << s.plain_decode_from << "\n";
  const double share = s.draft_ns + s.verify_ns > 0 ? 100.0 * static_cast<double>(s.draft_ns) / static_cast<double>(s.draft_ns + s.verify_ns) : 0;
  std::snprintf(line, sizeof line, "Drafting: %.3f ms, %.1f %% of the verify steps' time; %s\n", static_cast<double>(s.draft_ns) / 1e6, share,
                s.draft_on_critical_path ? "on the critical path (the target's GPU work runs into the drafts for under 10 % of their time: "
                                                                 "the drafts' time adds to their steps)"
                                         : "partly hidden (the target's queued GPU work runs into the draft ranges)");
  text << line;
  for (const auto& n : s.notes) text << "Note: " << n.text << "\n";
  return text.str();
}

}  // namespace kernscope
