// Reader for Nsight Systems SQLite exports (`nsys export --type sqlite`).
//
// Checked against exports of nsys 2025.3 (schema 3.20) and 2024.5 (schema 3.13), and against
// synthesized files with the column sets of older exports (2022.x/2023.x), where greenContextId,
// mangledName, graphNodeId, NVTX domainId/textId and whole tables may be missing. A missing column
// reads as its neutral value and is noted in Trace::notes; a missing table leaves its kind absent.
#pragma once

#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/open.hpp"
#include "kernscope/trace.hpp"
#include "readers/nsys_sqlite/sqlite_db.hpp"

namespace kernscope::nsys {

// True when the first bytes are SQLite's file header.
bool sniff_sqlite(const unsigned char* head, std::size_t size);

// Reads an export from an open database. `label` names the source in messages. With `file_path`
// (the database is that file), event tables are scanned in parallel on connections of their own.
Result<Trace> read_export(const Database& db, const std::string& label, const OpenOptions& options,
                          const std::string* file_path = nullptr);

}  // namespace kernscope::nsys
