// Notes (include/kernscope/notes.hpp) as JSON, one home for every document that writes them: an
// array of {"kind", "severity", "count", "text"}: `kernscope info --format json` writes the readers'
// this way, and host, whatif, critical-path, ranks, roofline, moe, spec, diff, compare and report's
// speed_of_light write the analyses' (steps and account print theirs as text only).
#pragma once

#include <string>
#include <vector>

#include "kernscope/notes.hpp"
#include "render/json_writer.hpp"

namespace kernscope {

// Writes the array as the value of the key just written (json.key("notes")).
inline JsonWriter& write_notes_json(JsonWriter& json, const std::vector<Note>& notes) {
  json.begin_array();
  for (const auto& n : notes) {
    json.begin_object().member("kind", n.kind).member("severity", std::string(severity_name(n.severity))).member("count", n.count);
    json.member("text", n.text).end_object();
  }
  return json.end_array();
}

}  // namespace kernscope
