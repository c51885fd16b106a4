#include "render/json_writer.hpp"

#include <fmt/format.h>

#include <cassert>
#include <charconv>
#include <cmath>
#include <iterator>

#include "base/utf8.hpp"

namespace kernscope {
namespace {

void append_escape(std::string& out, std::uint32_t code_unit) { fmt::format_to(std::back_inserter(out), "\\u{:04x}", code_unit); }

std::uint32_t decode(std::string_view text, std::size_t i, std::size_t len) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::uint32_t cp = len == 2 ? (lead & 0x1F) : len == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return cp;
}

// What a JSON string holds once read: `text` with invalid UTF-8 replaced as append_json_string does.
std::string readable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      continue;
    }
    out.append(text.substr(i, len));
    i += len - 1;
  }
  return out;
}

// A number's text as json.loads reads it back: null, an integer, or a float.
JsonValue number_value(std::string_view text) {
  if (text.empty() || text == "nan" || text == "inf" || text == "-inf" || text == "null") return {nullptr};
  if (text.find_first_of(".eE") == std::string_view::npos) {
    long long v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && p == text.data() + text.size()) return {v};
  }
  double d = 0;
  std::from_chars(text.data(), text.data() + text.size(), d);
  return {d};
}

}  // namespace

void append_json_string(std::string& out, std::string_view text, JsonText mode) {
  out.push_back('"');
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
      continue;
    }
    if (c < 0x20) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default: append_escape(out, c);
      }
      continue;
    }
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {  // not UTF-8: the replacement character keeps the output valid
      if (mode == JsonText::kAscii) out += "\\ufffd";
      else out += "\xEF\xBF\xBD";
      continue;
    }
    if (mode == JsonText::kUtf8) {
      out.append(text.substr(i, len));
    } else {
      std::uint32_t cp = decode(text, i, len);
      if (cp >= 0x10000) {  // a surrogate pair, as JSON spells characters beyond the BMP
        cp -= 0x10000;
        append_escape(out, 0xD800 + (cp >> 10));
        append_escape(out, 0xDC00 + (cp & 0x3FF));
      } else {
        append_escape(out, cp);
      }
    }
    i += len - 1;
  }
  out.push_back('"');
}

void JsonWriter::newline(std::size_t depth) {
  if (indent_ <= 0) return;
  out_.push_back('\n');
  out_.append(depth * static_cast<std::size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  assert(!levels_.back().object && "a value inside an object needs a key");
  if (!levels_.back().empty) out_ += indent_ > 0 ? "," : ", ";
  levels_.back().empty = false;
  newline(levels_.size());
}

JsonValue& JsonWriter::place(JsonValue value) {
  if (open_.empty()) {
    root_ = std::move(value);
    return root_;
  }
  JsonValue& parent = *open_.back();
  if (auto* object = std::get_if<JsonValue::Object>(&parent.v)) {
    object->emplace_back(std::move(pending_key_), std::move(value));
    pending_key_.clear();
    return object->back().second;
  }
  auto& array = std::get<JsonValue::Array>(parent.v);
  array.push_back(std::move(value));
  return array.back();
}

JsonWriter& JsonWriter::begin_object() {
  if (tree_) {
    open_.push_back(&place({JsonValue::Object{}}));
    return *this;
  }
  before_value();
  out_.push_back('{');
  levels_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  if (tree_) {
    open_.push_back(&place({JsonValue::Array{}}));
    return *this;
  }
  before_value();
  out_.push_back('[');
  levels_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (tree_) {
    open_.pop_back();
    return *this;
  }
  assert(!levels_.empty() && levels_.back().object);
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) newline(levels_.size());
  out_.push_back('}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (tree_) {
    open_.pop_back();
    return *this;
  }
  assert(!levels_.empty() && !levels_.back().object);
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) newline(levels_.size());
  out_.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (tree_) {
    pending_key_ = readable_text(name);
    return *this;
  }
  assert(!levels_.empty() && levels_.back().object && !after_key_);
  if (!levels_.back().empty) out_ += indent_ > 0 ? "," : ", ";
  levels_.back().empty = false;
  newline(levels_.size());
  append_json_string(out_, name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  if (tree_) {
    place({readable_text(text)});
    return *this;
  }
  before_value();
  append_json_string(out_, text);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  if (tree_) {
    place({b});
    return *this;
  }
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (tree_) {
    place(std::isfinite(number) ? number_value(fmt::format("{}", number)) : JsonValue{nullptr});
    return *this;
  }
  before_value();
  if (!std::isfinite(number)) out_ += "null";
  else fmt::format_to(std::back_inserter(out_), "{}", number);  // shortest text that reads back exactly
  return *this;
}

JsonWriter& JsonWriter::integer(long long number) {
  if (tree_) {
    place({number});
    return *this;
  }
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", number);
  return *this;
}

JsonWriter& JsonWriter::null() {
  if (tree_) {
    place({nullptr});
    return *this;
  }
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  if (tree_) {
    place({std::string(json)});  // text only (JsonWriter::rows gives tables as values)
    return *this;
  }
  before_value();
  while (!json.empty() && (json.back() == '\n' || json.back() == ' ')) json.remove_suffix(1);
  out_.append(json.empty() ? std::string_view("null") : json);
  return *this;
}

JsonWriter& JsonWriter::rows(const Table& table, const RenderOptions& options) {
  if (!tree_) return raw(table_json(table, options));
  std::vector<std::string> headers;
  for (const auto& c : table.columns) headers.push_back(column_header(c, options.time_unit));
  begin_array();
  for (const auto& row : table.rows) {
    begin_object();
    for (std::size_t c = 0; c < row.size() && c < headers.size(); ++c) {
      key(headers[c]);
      const JsonCell cell = json_cell(row[c], table.columns[c].unit, options.time_unit);
      switch (cell.kind) {
        case JsonCell::Kind::kString: value(cell.text); break;
        case JsonCell::Kind::kNumber: place(number_value(cell.text)); break;
        case JsonCell::Kind::kNull: place(JsonValue{nullptr}); break;
      }
    }
    end_object();
  }
  return end_array();
}

JsonValue JsonWriter::take() {
  assert(tree_ && open_.empty());
  return std::move(root_);
}

std::string JsonWriter::finish() {
  assert(levels_.empty());
  out_.push_back('\n');
  return std::move(out_);
}

}  // namespace kernscope
