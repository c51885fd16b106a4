#include "readers/kineto/json_splitter.hpp"

#include "readers/kineto/json_text.hpp"

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace kernscope::kineto {
namespace {

// Bytes that end the fast skip inside a string: the quote, the backslash, control characters.
constexpr std::array<bool, 256> kStringStop = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

}  // namespace

ValueScan scan_json_value(std::string_view text, bool at_end) {
  ValueScan out;
  const char* s = text.data();
  const std::size_t n = text.size();
  if (n == 0) return out;
  const char first = s[0];
  if (first != '{' && first != '[' && first != '"') {
    // A scalar: runs to the next delimiter.
    std::size_t i = 0;
    while (i < n && !is_json_space(s[i]) && s[i] != ',' && s[i] != ']' && s[i] != '}') ++i;
    if (i == n && !at_end) return out;
    out.status = ValueScan::kComplete;
    out.length = i;
    return out;
  }
  int depth = 0;
  char last = 0;  // last significant byte outside strings
  std::size_t i = 0;
  while (i < n) {
    const char c = s[i];
    if (c == '"') {
      std::size_t j = i + 1;
      while (true) {
        while (j < n && !kStringStop[static_cast<unsigned char>(s[j])]) ++j;
        if (j >= n) return out;
        const char d = s[j];
        if (d == '\\') {
          const Escape escape = escape_at(text, j);
          if (escape == Escape::kIncomplete) return out;
          if (escape == Escape::kInvalid) out.suspicious = true;
          j += 2;
          continue;
        }
        if (d == '"') {
          const Quote quote = quote_at(text, j);
          if (quote == Quote::kUnknown && !at_end) return out;
          if (quote != Quote::kInside) {
            j = j + 1;
            break;
          }
          out.suspicious = true;
          ++j;
          continue;
        }
        out.suspicious = true;  // a raw control character
        ++j;
      }
      i = j;
      last = '"';
      if (depth == 0) {
        out.status = ValueScan::kComplete;
        out.length = i;
        return out;
      }
      continue;
    }
    switch (c) {
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (last == ',') out.suspicious = true;  // trailing comma
        if (--depth == 0) {
          out.status = ValueScan::kComplete;
          out.length = i + 1;
          return out;
        }
        if (depth < 0) {
          out.status = ValueScan::kBad;
          out.why = "unbalanced brackets";
          return out;
        }
        break;
      case ' ':
      case '\n':
      case '\r':
      case '\t':
        ++i;
        continue;
      default:
        break;
    }
    last = c;
    ++i;
  }
  return out;
}

namespace {

// The document's bytes in a sliding window: [begin, end) of `data` are unread; everything before
// `begin` may be dropped at the next refill.
class Window {
 public:
  Window(ByteSource& source, std::size_t chunk, std::size_t max_bytes)
      : source_(source), chunk_(chunk), max_bytes_(max_bytes), data_(chunk + kSpanPadding) {}

  std::size_t begin = 0;
  std::size_t end = 0;
  bool eof = false;
  std::int64_t base_offset = 0;  // document offset of data_[0]

  const char* ptr(std::size_t index) const { return data_.data() + index; }
  std::string_view unread() const { return {data_.data() + begin, end - begin}; }
  std::int64_t offset(std::size_t index) const { return base_offset + static_cast<std::int64_t>(index); }

  // Reads more bytes, keeping [begin, end). false at the end of the data.
  Result<bool> refill() {
    if (eof) return false;
    if (begin > 0) {
      std::memmove(data_.data(), data_.data() + begin, end - begin);
      base_offset += static_cast<std::int64_t>(begin);
      end -= begin;
      begin = 0;
    }
    const std::size_t capacity = data_.size() - kSpanPadding;
    if (end == capacity) {
      if (capacity >= max_bytes_) {
        return make_error(ErrorCode::kBadInput, "a single trace event at byte " + std::to_string(base_offset) +
                                                    " is larger than " + std::to_string(max_bytes_ >> 20) + " MiB");
      }
      data_.resize(std::min(capacity * 2, max_bytes_) + kSpanPadding);
    }
    const std::size_t want = std::min(chunk_, data_.size() - kSpanPadding - end);
    auto got = source_.read(data_.data() + end, want);
    if (!got) return std::unexpected(got.error());
    if (*got == 0) {
      eof = true;
      return false;
    }
    end += *got;
    std::memset(data_.data() + end, 0, kSpanPadding);  // padding simdjson may read
    return true;
  }

  // Skips whitespace; the next byte, or -1 at the end of the data.
  Result<int> peek() {
    while (true) {
      while (begin < end && is_json_space(data_[begin])) ++begin;
      if (begin < end) return static_cast<unsigned char>(data_[begin]);
      auto more = refill();
      if (!more) return std::unexpected(more.error());
      if (!*more) return -1;
    }
  }

  // Scans the value at `begin`, reading more as needed. kNeedMore comes back only at the end.
  Result<ValueScan> scan_value() {
    while (true) {
      ValueScan scan = scan_json_value(unread(), eof);
      if (scan.status != ValueScan::kNeedMore || eof) return scan;
      auto more = refill();
      if (!more) return std::unexpected(more.error());
      if (!*more) return scan_json_value(unread(), true);
    }
  }

 private:
  ByteSource& source_;
  std::size_t chunk_;
  std::size_t max_bytes_;
  std::vector<char> data_;
};

std::unexpected<Error> syntax_error(const Window& w, const std::string& what) {
  return make_error(ErrorCode::kBadInput, "malformed JSON at byte " + std::to_string(w.offset(w.begin)) + ": " + what);
}

}  // namespace

Result<SplitResult> JsonSplitter::run(ByteSource& source, const MemberFn& on_member, const ElementFn& on_element) {
  SplitResult result;
  Window w(source, chunk_bytes_, max_element_bytes_);
  auto finish = [&]() -> Result<SplitResult> {
    result.document_bytes = w.offset(w.end);
    return result;
  };
  auto truncated_here = [&]() {
    result.truncated = true;
    result.truncated_bytes = static_cast<std::int64_t>(w.end - w.begin);
    w.begin = w.end;
  };

  // A value of the document: the next element or member, scanned whole.
  auto take_value = [&](Span& span) -> Result<bool> {
    auto scan = w.scan_value();
    if (!scan) return std::unexpected(scan.error());
    if (scan->status == ValueScan::kBad) return syntax_error(w, scan->why);
    if (scan->status == ValueScan::kNeedMore) return false;
    span.text = std::string_view(w.ptr(w.begin), scan->length);
    span.offset = w.offset(w.begin);
    span.suspicious = scan->suspicious;
    w.begin += scan->length;
    return true;
  };

  // The elements of an array whose '[' was just consumed, up to and including its ']'.
  auto read_array = [&]() -> Result<bool> {
    bool after_comma = false;
    while (true) {
      auto c = w.peek();
      if (!c) return std::unexpected(c.error());
      if (*c < 0) return false;
      if (*c == ']') {
        if (after_comma) ++result.trailing_commas;
        ++w.begin;
        return true;
      }
      if (*c == ',') {
        if (after_comma) ++result.trailing_commas;  // ",," : an empty slot, dropped
        after_comma = true;
        ++w.begin;
        continue;
      }
      Span span;
      auto got = take_value(span);
      if (!got) return std::unexpected(got.error());
      if (!*got) {
        truncated_here();
        return false;
      }
      after_comma = false;
      ++result.elements;
      auto handled = on_element(span);
      if (!handled) return std::unexpected(handled.error());
    }
  };

  auto c = w.peek();
  if (!c) return std::unexpected(c.error());
  // A UTF-8 byte order mark is allowed before the document.
  while (*c == 0xEF && w.unread().size() < 3 && !w.eof) {
    auto more = w.refill();
    if (!more) return std::unexpected(more.error());
  }
  if (*c == 0xEF && w.unread().starts_with("\xEF\xBB\xBF")) {
    w.begin += 3;
    c = w.peek();
    if (!c) return std::unexpected(c.error());
  }
  if (*c < 0) return make_error(ErrorCode::kBadInput, "empty JSON document");
  if (*c == '[') {
    result.top_level_array = true;
    result.has_trace_events = true;
    ++w.begin;
    auto closed = read_array();
    if (!closed) return std::unexpected(closed.error());
    if (!*closed) result.truncated = true;
    return finish();
  }
  if (*c != '{') return syntax_error(w, "a trace is a JSON object or array");
  ++w.begin;
  bool after_comma = false;
  while (true) {
    c = w.peek();
    if (!c) return std::unexpected(c.error());
    if (*c < 0) {
      result.truncated = true;
      return finish();
    }
    if (*c == '}') {
      if (after_comma) ++result.trailing_commas;
      ++w.begin;
      break;
    }
    if (*c == ',') {
      after_comma = true;
      ++w.begin;
      continue;
    }
    if (*c != '"') return syntax_error(w, "expected a member name");
    Span key_span;
    auto got = take_value(key_span);
    if (!got) return std::unexpected(got.error());
    if (!*got) {
      truncated_here();
      return finish();
    }
    // Keys Kineto writes have no escapes; drop the quotes.
    const std::string key(key_span.text.substr(1, key_span.text.size() - 2));
    c = w.peek();
    if (!c) return std::unexpected(c.error());
    if (*c < 0) {
      result.truncated = true;
      return finish();
    }
    if (*c != ':') return syntax_error(w, "expected ':' after member \"" + key + "\"");
    ++w.begin;
    c = w.peek();
    if (!c) return std::unexpected(c.error());
    if (*c < 0) {
      result.truncated = true;
      return finish();
    }
    after_comma = false;
    if (key == "traceEvents") {
      if (*c != '[') return syntax_error(w, "\"traceEvents\" is not an array");
      result.has_trace_events = true;
      ++w.begin;
      auto closed = read_array();
      if (!closed) return std::unexpected(closed.error());
      if (!*closed) {
        result.truncated = true;
        return finish();
      }
      continue;
    }
    Span value;
    got = take_value(value);
    if (!got) return std::unexpected(got.error());
    if (!*got) {
      truncated_here();
      return finish();
    }
    auto handled = on_member(key, value);
    if (!handled) return std::unexpected(handled.error());
  }
  // Only whitespace may follow the document.
  c = w.peek();
  if (!c) return std::unexpected(c.error());
  if (*c >= 0) return syntax_error(w, "unexpected bytes after the end of the document");
  return finish();
}

}  // namespace kernscope::kineto
