// The one JSON writer of kernscope's outputs: strict JSON (every control character escaped,
// invalid UTF-8 replaced by U+FFFD, NaN and infinities written as null), so any parser accepts
// what kernscope prints whatever bytes a kernel or NVTX name holds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kernscope {

enum class JsonText {
  kUtf8,   // valid UTF-8 passes through (compact; what viewers and kernscope's own documents use)
  kAscii,  // non-ASCII as \uXXXX escapes, as Python's json.dumps writes them (nsys's JSON reports)
};

// Appends `text` as a quoted JSON string.
void append_json_string(std::string& out, std::string_view text, JsonText mode = JsonText::kUtf8);

// A streaming writer for documents: objects and arrays nest, members are indented by `indent`
// spaces per level (0 writes everything on one line). Misuse (a value where a key is due) is a
// programming error and asserts in debug builds.
class JsonWriter {
 public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

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
  // Inserts already-valid JSON (a table rendered by render()) as the next value.
  JsonWriter& raw(std::string_view json);

  // key(name).value(v) in one call.
  template <class T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // The document, ending with a newline.
  std::string finish();

 private:
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
};

}  // namespace kernscope
