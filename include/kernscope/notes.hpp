// What a reader met that did not stop it, as Perfetto's stats table keeps it: each note has a kind
// (a stable key a script can count or filter on), a severity and, for problems met several times,
// a count; the sentence beside them is for people. `kernscope info` lists them and counts them by
// kind and severity (text and JSON); Python gets them as dicts of the same fields.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernscope {

// Perfetto's severities: kInfo, what the source lacks or how it was read (nothing is wrong);
// kDataLoss, events or fields the trace should have held and does not (cut short, skipped,
// another profiler took records); kError, a part kernscope could not read.
enum class NoteSeverity : std::uint8_t { kInfo, kDataLoss, kError };

inline std::string_view severity_name(NoteSeverity s) {
  switch (s) {
    case NoteSeverity::kInfo: return "info";
    case NoteSeverity::kDataLoss: return "data_loss";
    case NoteSeverity::kError: return "error";
  }
  return "info";
}

// The severity a name (severity_name's) stands for; none for any other word. Notes read back from
// where they were written as words (the fleet's Parquet digests) go through it.
inline std::optional<NoteSeverity> severity_named(std::string_view name) {
  for (auto s : {NoteSeverity::kInfo, NoteSeverity::kDataLoss, NoteSeverity::kError}) {
    if (severity_name(s) == name) return s;
  }
  return std::nullopt;
}

struct Note {
  std::string kind;  // e.g. "no_nvtx_table", "events_without_time", "cut_short"
  NoteSeverity severity = NoteSeverity::kInfo;
  std::string text;        // the sentence shown
  std::int64_t count = 1;  // how many events or rows it is about, where it is about several
};

// The note passed on by something that gathers notes of several sources, its text led by where it
// came from ("rank 3: ", "cublas-log: "); kind, severity and count stay the source's.
inline Note note_from(std::string_view source, Note note) {
  note.text.insert(0, source);
  return note;
}

// The notes' sentences in order, for what lists the text alone (a page's bullets, a key of sentences).
inline std::vector<std::string> note_texts(const std::vector<Note>& notes) {
  std::vector<std::string> out;
  out.reserve(notes.size());
  for (const auto& n : notes) out.push_back(n.text);
  return out;
}

// Notes of one kind and severity, added up.
struct NoteCount {
  std::string kind;
  NoteSeverity severity = NoteSeverity::kInfo;
  std::int64_t notes = 0;  // how many notes
  std::int64_t count = 0;  // their counts summed
};

// The notes counted by (severity, kind): errors first, then data losses, then the rest.
inline std::vector<NoteCount> count_notes(const std::vector<Note>& notes) {
  std::vector<NoteCount> out;
  for (const auto& n : notes) {
    NoteCount* row = nullptr;
    for (auto& c : out) {
      if (c.kind == n.kind && c.severity == n.severity) row = &c;
    }
    if (!row) row = &out.emplace_back(NoteCount{n.kind, n.severity, 0, 0});
    ++row->notes;
    row->count += n.count;
  }
  std::stable_sort(out.begin(), out.end(), [](const NoteCount& a, const NoteCount& b) {
    return a.severity != b.severity ? a.severity > b.severity : a.kind < b.kind;
  });
  return out;
}

}  // namespace kernscope
