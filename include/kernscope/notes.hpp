// What a reader met that did not stop it, as Perfetto's stats table keeps it: each note has a kind
// (a stable key a script can count or filter on), a severity and, for problems met several times,
// a count; the sentence beside them is for people. `kernscope info` lists them and counts them by
// kind and severity (text and JSON); Python gets them as dicts of the same fields.
#pragma once

#include <algorithm>
#include <cstdint>
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

struct Note {
  std::string kind;  // e.g. "no_nvtx_table", "events_without_time", "cut_short"
  NoteSeverity severity = NoteSeverity::kInfo;
  std::string text;        // the sentence shown
  std::int64_t count = 1;  // how many events or rows it is about, where it is about several
};

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
