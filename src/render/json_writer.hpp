// The one JSON writer of kernscope's outputs: strict JSON (every control character escaped,
// invalid UTF-8 replaced by U+FFFD, NaN and infinities written as null), so any parser accepts
// what kernscope prints whatever bytes a kernel or NVTX name holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kernscope/render.hpp"

namespace kernscope {

enum class JsonText {
  kUtf8,   // valid UTF-8 passes through (compact; what viewers and kernscope's own documents use)
  kAscii,  // non-ASCII as \uXXXX escapes, as Python's json.dumps writes them (nsys's JSON reports)
};

// Appends `text` as a quoted JSON string.
void append_json_string(std::string& out, std::string_view text, JsonText mode = JsonText::kUtf8);

// A JSON value in memory, as JsonWriter::tree() builds it: what Python receives as dicts and lists
// straight from a document, with no JSON text written and parsed in between. Numbers are as the text
// would read back (json.loads): an integer where the text has no fraction or exponent.
struct JsonValue {
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;
  std::variant<std::nullptr_t, bool, long long, double, std::string, Array, Object> v = nullptr;
};

// A streaming writer for documents: objects and arrays nest, members are indented by `indent`
// spaces per level (0 writes everything on one line). Misuse (a value where a key is due) is a
// programming error and asserts in debug builds.
class JsonWriter {
 public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {}
  // A writer that builds a JsonValue instead of text (take() returns it); the same calls make both.
  static JsonWriter tree() {
    JsonWriter w(0);
    w.tree_ = true;
    return w;
  }

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double number);
  template <class Int>
    requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>)
  JsonWriter& value(Int number) {
    return integer(static_cast<long long>(number));
  }
  JsonWriter& null();
  // Inserts already-valid JSON as the next value (text only: a tree keeps it as a string).
  JsonWriter& raw(std::string_view json);
  // A table's rows as render() writes them in JSON ("[]" when it has none): nsys's header names as
  // keys, each cell as its text reads back.
  JsonWriter& rows(const Table& table, const RenderOptions& options);

  // key(name).value(v) in one call.
  template <class T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // The document, ending with a newline.
  std::string finish();
  // The tree built (JsonWriter::tree()).
  JsonValue take();

 private:
  JsonValue& place(JsonValue value);  // tree: the value added where the next one goes
  JsonWriter& integer(long long number);
  void before_value();
  void newline(std::size_t depth);

  struct Level {
    bool object;
    bool empty = true;
  };
  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
  int indent_;
  bool tree_ = false;
  JsonValue root_;
  std::vector<JsonValue*> open_;  // tree: the arrays and objects being filled, innermost last
  std::string pending_key_;
};

}  // namespace kernscope
