// Speculative decoding read from a trace (`kernscope spec`): the verify steps and the
// drafting before each, found from the ranges engines leave (data/spec_markers.tsv: Hugging Face
// assisted generation's candidate generator, SGLang's EAGLE worker and step spans, vLLM's
// proposers), the tokens proposed and accepted per verify where the trace shows them, time per
// emitted token against a plain decode step, the verify's cost per extra position, and whether
// drafting sits on the critical path.
//
// Where tokens come from: only Hugging Face's loop leaves them in a trace, as operator shapes under
// record_shapes (spec_tokens.hpp). vLLM and SGLang count acceptance on the GPU and report it in
// their logs and metrics, not in any trace; the result says so rather than guessing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/text_pattern.hpp"
#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

enum class SpecMarker { kDraft, kStep, kVerifyEnd };

// The built-in markers (data/spec_markers.tsv, compiled in): the role of a range's text, or nullopt.
class SpecMarkers {
 public:
  static const SpecMarkers& builtin();
  static Result<SpecMarkers> parse(const std::string& text, const std::string& source);
  std::optional<SpecMarker> role_of(std::string_view text) const;

 private:
  struct Rule {
    SpecMarker role;
    TextPattern matcher;
  };
  std::vector<Rule> rules_;
};

struct SpecStep {
  std::int64_t index = 0;
  std::int64_t thread = 0;  // global tid
  TimeNs start = 0, end = 0;   // the first draft's start (or the verify's) to the verify's end
  std::int64_t draft_ns = 0;   // drafting: the draft ranges' time
  std::int64_t verify_ns = 0;  // the rest of the window: the target's forward and the acceptance
  std::int64_t drafts = 0;     // draft ranges
  // From operator shapes where the trace has them (-1: not shown).
  std::int64_t verify_positions = -1;  // positions the target's verify forward fed
  std::int64_t proposed = -1, accepted = -1, emitted = -1;
  bool prefill = false;  // the verify also fed the prompt (the first verify of a request)
};

struct SpecAnalysis {
  bool present = false;
  std::string evidence;  // which markers were found (or why none)
  std::string engine;    // whose markers: "Hugging Face assisted generation", "SGLang EAGLE", "vLLM"
  std::string tokens_from;  // where proposed/accepted come from, or why the trace has none
  std::vector<SpecStep> steps;
  // Totals over the steps whose tokens are shown.
  std::int64_t proposed = 0, accepted = 0, emitted = 0, steps_with_tokens = 0;
  std::optional<double> acceptance;        // accepted / proposed
  std::optional<double> ms_per_emitted;    // decode steps' time (draft + verify) / tokens they emitted
  // The verify's cost per position: verify time = base + per_position x positions, fitted over
  // decode verify steps with different positions; a plain decode step is that line at 1 position.
  std::optional<double> verify_ms_per_position, plain_decode_ms;
  std::string plain_decode_from;
  std::optional<double> speedup;  // plain decode ms / ms per emitted token (> 1: speculation pays)
  std::int64_t draft_ns = 0, verify_ns = 0;
  // Drafting on the critical path: GPU work launched outside the draft ranges (the target's)
  // running while they run; none means every draft's time adds to its step.
  std::int64_t draft_overlapped_ns = 0;
  bool draft_on_critical_path = false;
  std::vector<Note> notes;
};

Result<SpecAnalysis> analyze_spec(const Trace& trace, const SpecMarkers& markers = SpecMarkers::builtin());

Table spec_steps_table(const SpecAnalysis& spec);

}  // namespace kernscope
