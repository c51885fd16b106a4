// Notes (include/kernscope/notes.hpp) as Python dicts {"kind", "severity", "count", "text"}, the
// fields `kernscope info --format json` writes, both ways: out for Trace.info and the fleet's
// results, and back in from the fleet's Parquet digests (a list of structs per rank reads back as
// a list of such dicts).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernscope/notes.hpp"

namespace kernscope::python {

inline nanobind::dict note_dict(const Note& n) {
  nanobind::dict note;
  note["kind"] = n.kind;
  note["severity"] = std::string(severity_name(n.severity));
  note["count"] = n.count;
  note["text"] = n.text;
  return note;
}

inline nanobind::list note_dicts(const std::vector<Note>& notes) {
  nanobind::list out;
  for (const auto& n : notes) out.append(note_dict(n));
  return out;
}

// A list of note dicts as notes; `where` names the column in what a malformed one throws
// (std::invalid_argument): not a list of dicts, a field missing or of another type, an unknown severity.
inline std::vector<Note> notes_of_dicts(nanobind::handle list, const std::string& where) {
  auto bad = [&](const std::string& why) { return std::invalid_argument(where + ": " + why); };
  if (!nanobind::isinstance<nanobind::list>(list)) throw bad("not a list of notes");
  std::vector<Note> notes;
  for (nanobind::handle item : nanobind::borrow<nanobind::list>(list)) {
    if (!nanobind::isinstance<nanobind::dict>(item)) throw bad("a note is not a dict of kind, severity, count and text");
    const auto d = nanobind::borrow<nanobind::dict>(item);
    Note n;
    std::string severity;
    if (!d.contains("kind") || !d.contains("severity") || !d.contains("count") || !d.contains("text") ||
        !nanobind::try_cast(d["kind"], n.kind) || !nanobind::try_cast(d["severity"], severity) ||
        !nanobind::try_cast(d["count"], n.count) || !nanobind::try_cast(d["text"], n.text)) {
      throw bad("a note lacks kind, severity, count or text, or holds another type");
    }
    const auto named = severity_named(severity);
    if (!named) throw bad("a note's severity is '" + severity + "', not info, data_loss or error");
    n.severity = *named;
    notes.push_back(std::move(n));
  }
  return notes;
}

}  // namespace kernscope::python
