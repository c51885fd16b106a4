#include "base/text_pattern.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

namespace kernscope {

struct TextPattern::Code {
  pcre2_code* code = nullptr;
  std::uint32_t groups = 0;  // capture groups, not counting the whole match
  ~Code() { pcre2_code_free(code); }
};

namespace {

struct MatchData {
  explicit MatchData(const pcre2_code* code) : data(pcre2_match_data_create_from_pattern(code, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(data); }
  MatchData(const MatchData&) = delete;
  MatchData& operator=(const MatchData&) = delete;
  pcre2_match_data* data;
};

}  // namespace

std::string_view PatternMatch::group(std::size_t i) const {
  if (i >= spans_.size() || spans_[i].first == std::string_view::npos) return {};
  return text_.substr(spans_[i].first, spans_[i].second - spans_[i].first);
}

bool PatternMatch::has(std::size_t i) const { return i < spans_.size() && spans_[i].first != std::string_view::npos; }

std::expected<TextPattern, std::string> TextPattern::compile(std::string_view pattern, Options options) {
  // DOLLAR_ENDONLY: `$` is the end of the text, not also before a final newline (ECMAScript's `$`).
  // And what else ECMAScript (std::regex) takes that PCRE2 would not by default: `[^]` (any character),
  // \uXXXX escapes, a backreference to a group that took no part (matches empty).
  std::uint32_t flags = PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_ALT_BSUX | PCRE2_MATCH_UNSET_BACKREF;
  if (options.ignore_case) flags |= PCRE2_CASELESS;
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), flags, &error, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    return std::unexpected(std::string(reinterpret_cast<const char*>(message)) + " at offset " + std::to_string(offset));
  }
  // JIT where the CPU and the library allow it; the interpreter otherwise (same results).
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  auto owned = std::make_shared<Code>();
  owned->code = code;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &owned->groups);
  TextPattern p;
  p.code_ = std::move(owned);
  return p;
}

TextPattern TextPattern::literal(std::string_view pattern, Options options) {
  auto p = compile(pattern, options);
  if (!p) throw std::invalid_argument("kernscope: bad built-in pattern " + std::string(pattern) + ": " + p.error());
  return std::move(*p);
}

std::optional<PatternMatch> TextPattern::run(std::string_view text, std::size_t from, bool whole) const {
  if (!code_ || from > text.size()) return std::nullopt;
  MatchData md(code_->code);
  const std::uint32_t flags = whole ? (PCRE2_ANCHORED | PCRE2_ENDANCHORED) : 0;
  int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from, flags, md.data, nullptr);
  // The JIT's stack (32 KiB) can run out on a long name with a pattern that backtracks much: the
  // interpreter, whose limits are far larger, answers then.
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
    rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from, flags | PCRE2_NO_JIT, md.data, nullptr);
  }
  if (rc < 0) return std::nullopt;
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(md.data);
  PatternMatch m;
  m.text_ = text;
  m.spans_.resize(code_->groups + 1);
  for (std::size_t i = 0; i < m.spans_.size(); ++i) {
    const bool set = static_cast<int>(i) < rc && ovector[2 * i] != PCRE2_UNSET;
    m.spans_[i] = set ? std::pair{ovector[2 * i], ovector[2 * i + 1]} : std::pair{std::string_view::npos, std::string_view::npos};
  }
  return m;
}

bool TextPattern::search(std::string_view text) const { return run(text, 0, false).has_value(); }
bool TextPattern::matches(std::string_view text) const { return run(text, 0, true).has_value(); }
std::optional<PatternMatch> TextPattern::find(std::string_view text, std::size_t from) const { return run(text, from, false); }
std::optional<PatternMatch> TextPattern::match_whole(std::string_view text) const { return run(text, 0, true); }

std::string TextPattern::replace_all(std::string_view text, std::string_view replacement) const {
  std::string out;
  std::size_t at = 0;
  while (at <= text.size()) {
    auto m = run(text, at, false);
    if (!m) break;
    out.append(text.substr(at, m->start() - at));
    for (std::size_t i = 0; i < replacement.size(); ++i) {
      const char c = replacement[i];
      if (c == '$' && i + 1 < replacement.size() && replacement[i + 1] >= '0' && replacement[i + 1] <= '9') {
        out.append(m->group(static_cast<std::size_t>(replacement[i + 1] - '0')));
        ++i;
      } else {
        out.push_back(c);
      }
    }
    if (m->end() == m->start()) {  // an empty match: keep the next character and move past it
      if (m->end() < text.size()) out.push_back(text[m->end()]);
      at = m->end() + 1;
    } else {
      at = m->end();
    }
  }
  if (at < text.size()) out.append(text.substr(at));
  return out;
}

}  // namespace kernscope
