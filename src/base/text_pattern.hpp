// Regular expressions, the one engine kernscope uses: PCRE2, compiled once and JIT-compiled where the
// CPU allows. std::regex was measured at a third of `steps` on the bundled Llama export and 150 ms
// per small fuzz input (its case-insensitive matcher looks the locale's ctype facet up for every
// character); PCRE2 matches these patterns in microseconds and takes every ECMAScript construct the
// built-in tables and users' rule files use (groups, classes, \b, lazy quantifiers, lookahead).
// Bytes are matched as bytes (no UTF-8 check: kernel names and annotations may hold any byte), and
// `$` means the end of the text only, as in ECMAScript.
#pragma once

#include <cstddef>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernscope {

// One match: the whole match and each capture group as offsets into the searched text.
class PatternMatch {
 public:
  // Group 0 is the whole match; a group that took no part is empty (and absent in has()).
  std::string_view group(std::size_t i) const;
  bool has(std::size_t i) const;
  std::size_t start(std::size_t i = 0) const { return spans_[i].first; }
  std::size_t end(std::size_t i = 0) const { return spans_[i].second; }

 private:
  friend class TextPattern;
  std::string_view text_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // npos: the group did not take part
};

struct PatternOptions {
  bool ignore_case = false;
};

class TextPattern {
 public:
  using Options = PatternOptions;
  // The pattern compiled, or PCRE2's message with the offset of the error.
  static std::expected<TextPattern, std::string> compile(std::string_view pattern, Options options);
  static std::expected<TextPattern, std::string> compile(std::string_view pattern) { return compile(pattern, Options{}); }
  // For patterns written in kernscope's own source: a bad one is a programming error (tests compile
  // every one of them), reported by throwing std::invalid_argument.
  static TextPattern literal(std::string_view pattern, Options options = {});

  // Anywhere in the text.
  bool search(std::string_view text) const;
  // The whole text.
  bool matches(std::string_view text) const;
  // The first match at or after `from`, with its groups.
  std::optional<PatternMatch> find(std::string_view text, std::size_t from = 0) const;
  // The whole text as one match, with its groups.
  std::optional<PatternMatch> match_whole(std::string_view text) const;
  // Every match replaced by `replacement`, where $1..$9 stand for groups (as std::regex_replace).
  std::string replace_all(std::string_view text, std::string_view replacement) const;


 private:
  struct Code;
  std::optional<PatternMatch> run(std::string_view text, std::size_t from, bool whole) const;
  std::shared_ptr<const Code> code_;
};

}  // namespace kernscope
