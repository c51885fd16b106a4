#include "readers/kineto/kineto_event.hpp"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#ifndef KERNSCOPE_EVENT_VARIANT
#error "compiled once per CPU variant (see src/readers/CMakeLists.txt)"
#endif

namespace kernscope::kineto::KERNSCOPE_EVENT_VARIANT {
namespace {

namespace od = simdjson::ondemand;
static_assert(kSpanPadding >= simdjson::SIMDJSON_PADDING, "spans must carry simdjson's padding");

std::unexpected<Error> json_error(simdjson::error_code code) {
  return make_error(ErrorCode::kBadInput, simdjson::error_message(code));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Keys are compared raw (without unescaping): Kineto's keys have no escapes.
std::string_view raw_key(od::field& field) {
  const char* p = field.key().raw();
  const char* q = static_cast<const char*>(std::memchr(p, '"', 256));
  return q ? std::string_view(p, static_cast<std::size_t>(q - p)) : std::string_view(p, 0);
}

// An integer argument; fractional numbers truncate, strings of digits are accepted, other
// values leave -1.
std::int64_t integer(od::value value) {
  std::string_view token = trim(value.raw_json_token());
  if (!token.empty() && token.front() == '"') token = token.substr(1, token.size() >= 2 ? token.size() - 2 : 0);
  std::int64_t n = -1;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), n);
  if (ec == std::errc() && end == token.data() + token.size()) return n;
  double d = 0;
  auto [dend, dec] = std::from_chars(token.data(), token.data() + token.size(), d);
  if (dec == std::errc() && dend == token.data() + token.size() && std::isfinite(d) && std::fabs(d) < 9e18) {
    return static_cast<std::int64_t>(d);
  }
  return -1;
}

std::string_view text(od::value value) {
  std::string_view s;
  if (value.get_string().get(s)) return {};
  return s;
}

// An array argument as the JSON text the trace wrote (empty when not an array).
std::string_view array_text(od::value value) {
  od::array array;
  if (value.get_array().get(array)) return {};
  std::string_view raw;
  if (array.raw_json().get(raw)) return {};
  return raw;
}

// Three integers of a [x, y, z] array.
bool triple(od::value value, std::array<std::int32_t, 3>& out) {
  od::array array;
  if (value.get_array().get(array)) return false;
  std::size_t i = 0;
  for (auto element : array) {
    od::value v;
    if (element.get(v)) return false;
    if (i < 3) out[i] = static_cast<std::int32_t>(integer(v));
    ++i;
  }
  return true;
}

IdValue id_value(od::value value) {
  IdValue id;
  od::json_type type;
  if (value.type().get(type)) return id;
  id.present = true;
  if (type == od::json_type::string) {
    id.is_text = true;
    id.text = text(value);
    // "7" is the number 7, as Chrome's viewer treats it.
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(id.text.data(), id.text.data() + id.text.size(), n);
    if (ec == std::errc() && end == id.text.data() + id.text.size() && !id.text.empty()) {
      id.is_text = false;
      id.number = n;
    }
  } else {
    id.number = integer(value);
  }
  return id;
}

Result<void> parse_args(od::value value, KinetoEvent& e) {
  od::object args;
  if (auto err = value.get_object().get(args)) return json_error(err);
  for (auto field_result : args) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return json_error(err);
    const std::string_view key = raw_key(field);
    od::value v = field.value();
    switch (key.size()) {
      case 4:
        if (key == "grid") e.has_grid = triple(v, e.grid);
        else if (key == "cbid") e.cbid = integer(v);
        else if (key == "name") e.arg_name = text(v);
        break;
      case 5:
        if (key == "block") e.has_block = triple(v, e.block);
        else if (key == "bytes") e.bytes = integer(v);
        break;
      case 6:
        if (key == "device") e.device = integer(v);
        else if (key == "stream") e.stream = integer(v);
        else if (key == "labels") e.arg_labels = text(v);
        else if (key == "domain") e.domain = text(v);
        break;
      case 7:
        if (key == "context") e.context = integer(v);
        break;
      case 8:
        if (key == "graph id") e.graph_id = integer(v);
        break;
      case 10:
        if (key == "Input Dims") e.input_dims = array_text(v);
        else if (key == "Input type") e.input_types = array_text(v);
        break;
      case 11:
        if (key == "correlation") e.correlation = integer(v);
        else if (key == "External id") e.external_id = integer(v);
        break;
      case 13:
        if (key == "shared memory") e.shared_memory = integer(v);
        else if (key == "graph node id") e.graph_node_id = integer(v);
        else if (key == "graph exec id") e.graph_exec_id = integer(v);
        break;
      case 15:
        if (key == "Concrete Inputs") e.concrete_inputs = array_text(v);
        break;
      case 20:
        if (key == "registers per thread") e.registers = integer(v);
        break;
      case 21:
        if (key == "wait_on_cuda_event_id") e.wait_event_id = integer(v);
        break;
      default:
        break;
    }
  }
  return {};
}

class Backend final : public EventParser::Backend {
 public:
  Result<void> parse(std::string_view text, std::size_t capacity, KinetoEvent& out) override;

 private:
  od::parser parser_;
};

}  // namespace

std::unique_ptr<EventParser::Backend> make_event_parser() { return std::make_unique<Backend>(); }

namespace {

Result<void> Backend::parse(std::string_view json, std::size_t capacity, KinetoEvent& e) {
  e = KinetoEvent{};
  od::document doc;
  if (auto err = parser_.iterate(json.data(), json.size(), capacity).get(doc)) return json_error(err);
  od::object object;
  if (auto err = doc.get_object().get(object)) return json_error(err);
  for (auto field_result : object) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return json_error(err);
    const std::string_view key = raw_key(field);
    od::value v = field.value();
    if (key == "ph") {
      e.ph = text(v);
    } else if (key == "cat") {
      e.cat = text(v);
    } else if (key == "name") {
      e.name = text(v);
    } else if (key == "pid") {
      e.pid = id_value(v);
    } else if (key == "tid") {
      e.tid = id_value(v);
    } else if (key == "ts" || key == "dur") {
      std::string_view token = trim(v.raw_json_token());
      if (!token.empty() && token.front() == '"') {
        if (v.get_string().get(token)) return make_error(ErrorCode::kBadInput, "bad \"" + std::string(key) + "\"");
      }
      (key == "ts" ? e.ts : e.dur) = token;
    } else if (key == "id") {
      e.id = trim(v.raw_json_token());
    } else if (key == "args") {
      auto parsed = parse_args(v, e);
      if (!parsed) return parsed;
    }
  }
  return {};
}

}  // namespace
}  // namespace kernscope::kineto::KERNSCOPE_EVENT_VARIANT
