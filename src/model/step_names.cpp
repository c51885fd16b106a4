#include "model/step_names.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "base/text_pattern.hpp"
#include "base/text_util.hpp"

namespace kernscope {
namespace {

// The part of a range's text that names it: after the last ':' or '/' ("measure:decode_step",
// "llm/prefill"), so a label in front of the step's name does not hide it.
std::string_view last_segment(std::string_view text) {
  const auto cut = text.find_last_of(":/");
  return cut == std::string_view::npos ? text : text.substr(cut + 1);
}

// Names a step is called by, whole (after lowercasing and dropping a trailing step number).
bool is_step_word(std::string_view word) {
  static constexpr std::string_view kWords[] = {
      "prefill",    "decode",        "decode_step",  "prefill_step", "step",          "train_step", "training_step",
      "iteration",  "iter",          "generate",     "generation",   "generate_step", "forward",    "forward_pass",
      "forward_step", "model_forward", "execute_model", "profilerstep", "inference_step", "serving_step",
      "denoise_step", "denoising_step"};
  return std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords);
}

// "decode_step_12" / "ProfilerStep#3" / "step 7" -> "decode_step" / "profilerstep" / "step".
std::string without_step_number(std::string text) {
  std::size_t end = text.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(text[end - 1]))) --end;
  if (end == text.size()) return text;
  while (end > 0 && (text[end - 1] == '#' || text[end - 1] == '_' || text[end - 1] == ' ' || text[end - 1] == '-')) --end;
  return text.substr(0, end);
}

// A request count from a name: digits only (the regex's \d+), so only its size can fail to parse,
// and a count too large for a long still counts as "some requests".
long count_in_name(std::string_view digits) {
  long n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc::result_out_of_range ? 1 : n;
}

Phase phase_from_counts(long context, long generation) {
  if (context > 0 && generation > 0) return Phase::kMixed;
  if (context > 0) return Phase::kPrefill;
  if (generation > 0) return Phase::kDecode;
  return Phase::kUnknown;
}

// SGLang's ModelRunner.forward names each forward pass after its ForwardMode
// (model_runner.py, _build_step_span_name): "step[EXTEND bs=15 toks=15360]", "step[DECODE bs=32]",
// "step[MIXED bs=8]". What the mode means (forward_batch_info.py): EXTEND and PREFILL compute the
// prompt's KV cache ("also called prefill"), SPLIT_PREFILL is a prefill run layer by layer,
// DECODE makes one token per request, MIXED is chunked prefill batched with decodes. The modes of
// speculative decoding (TARGET_VERIFY, DRAFT_EXTEND...), IDLE and the others are steps whose phase
// the name does not state.
std::optional<Phase> sglang_step(std::string_view text) {
  static const auto kSglang = TextPattern::literal(R"(^step\[([A-Z_0-9]+)(?:[ \]].*)?$)");
  const auto m = kSglang.match_whole(text);
  if (!m) return std::nullopt;
  const std::string_view mode = m->group(1);
  if (mode == "EXTEND" || mode == "PREFILL" || mode == "SPLIT_PREFILL") return Phase::kPrefill;
  if (mode == "DECODE") return Phase::kDecode;
  if (mode == "MIXED") return Phase::kMixed;
  return Phase::kUnknown;
}

}  // namespace

std::optional<Phase> step_name_phase(std::string_view text) {
  // Every spelling below holds one of these words: the regexes run only for names that do (the
  // tracer asks for each new NVTX range name on the program's thread).
  static constexpr std::string_view kKeys[] = {"step", "prefill", "decode", "iter", "generat", "forward", "execute", "denois"};
  const std::string lower = text::lowercase(text);
  if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](std::string_view k) { return lower.find(k) != std::string::npos; })) {
    return std::nullopt;
  }
  if (auto sglang = sglang_step(text)) return sglang;
  // vLLM (the model runner's execute_model annotation, NVTX or record_function): the counts of
  // context (prefill) and generation (decode) requests in the name, each optionally followed by
  // their tokens in parentheses. Two spellings: "execute_8192_context_9(...)_generation_37(...)"
  // (total scheduled tokens first, vLLM V1's gpu_model_runner) and the older
  // "execute_context_1(888_788544)_generation_0(0)" without it.
  static const auto kVllm = TextPattern::literal(R"(execute_(?:\d+_)?context_(\d+)(?:\([^)]*\))?_generation_(\d+))");
  // TensorRT-LLM's PyExecutor: "_forward_step 12: 1 ctx reqs, 3 gen reqs".
  static const auto kTrtllm = TextPattern::literal(R"(^_?forward_step\b.*?(\d+) ctx reqs?.*?(\d+) gen reqs?)");
  for (const auto* pattern : {&kVllm, &kTrtllm}) {
    if (auto m = pattern->find(lower)) return phase_from_counts(count_in_name(m->group(1)), count_in_name(m->group(2)));
  }
  const std::string word = without_step_number(std::string(last_segment(lower)));
  if (!is_step_word(word)) return std::nullopt;
  return phase_from_name(word);
}

std::optional<Phase> engine_step_function_phase(std::string_view text) {
  const auto colon = text.rfind("): ");
  const std::string_view name = colon == std::string_view::npos ? text : text.substr(colon + 3);
  if (name == "generate_token" || name == "execute_model") return Phase::kUnknown;
  return std::nullopt;
}

}  // namespace kernscope
