// Readers registered with a content sniffer and a priority. open_trace asks every reader how
// sure it is that a file is its format and hands the file to the surest (then the one of higher
// priority), so a new dialect — another SQLite schema, another JSON layout — is one reader file
// plus one line in reader_registry.cpp, and cannot be routed to the wrong reader by a byte test.
#pragma once

#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/open.hpp"
#include "kernscope/trace.hpp"
#include "readers/compressed_file.hpp"

namespace kernscope::readers {

// What sniffers see of a file.
struct Probe {
  std::string path;
  std::vector<unsigned char> head;  // the first bytes of the content (decompressed)
  Compression compression = Compression::kNone;
  bool has_extension(std::string_view extension) const;
};

enum class Match {
  kNo = 0,
  kMaybe = 1,  // the container fits (SQLite, JSON) but the dialect was not checked
  kYes = 2,    // the reader recognised its own format
};

struct ReaderEntry {
  const char* name;
  int priority;  // breaks ties between readers with the same Match
  Match (*sniff)(const Probe& probe);
  Result<Trace> (*read)(const Probe& probe, const OpenOptions& options);
};

const std::vector<ReaderEntry>& readers();

// One per reader, in its own file.
ReaderEntry nsys_sqlite_reader();
ReaderEntry nsys_rep_reader();
ReaderEntry kineto_json_reader();
ReaderEntry ncu_csv_reader();

}  // namespace kernscope::readers
