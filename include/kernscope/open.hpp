// Opening a trace: sniff the format, pick the reader, fill the model.
#pragma once

#include <string>

#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

struct OpenOptions {
  EventKinds kinds = kAllEventKinds;  // event kinds to load; others are only checked for presence
  // Kinds whose every column is read. For the others only the columns summaries use are read
  // (kernels: times, process, device, context, correlation, names, graph node; API calls: times,
  // thread, correlation, name) and the rest are empty: reading fewer columns is most of the reader's speed.
  EventKinds detail_kinds = kAllEventKinds;
  // Kernels' short and mangled names (nsys's --base/--mangled kernel names, diff's kernel identity).
  // Plans that read neither leave them out (empty columns; the demangled name is always read): on
  // the 1 GB export they are 46 MiB that `report` does not need.
  bool kernel_name_variants = true;
  // When the CUDA-calling threads were on a CPU, from nsys's scheduling events (Trace::thread_cpu):
  // read where calls and ranges are loaded, for finding and accounting steps. Plans that find no steps
  // (stats, export) leave them out: the table can hold every thread's switches.
  bool thread_cpu = true;
  // Large tables of a file export are scanned in parallel slices of about this many rows, one
  // connection per worker thread, at most one slice per core per table; 0 scans each table whole.
  // 10k measured best on a 16-core H200 host (bench/RESULTS.md).
  std::size_t rows_per_slice = 10'000;
  // A trace cut short (a profiler killed while writing, a broken copy: its JSON ends inside an event)
  // is an error unless asked for: then it is read up to its last whole event and `Trace::cut_short`
  // says so. The ranks of one run read their files this way and name each cut rank.
  bool partial = false;
};

// Accepts Nsight Systems SQLite exports (.sqlite, .sqlite.gz), .nsys-rep files (exported with
// `nsys export` when nsys is on PATH), and PyTorch profiler (Kineto) / Chrome JSON traces (.json,
// .json.gz). Errors: kNotFound, kBadInput (with one clear line).
Result<Trace> open_trace(const std::string& path, const OpenOptions& options = {});

}  // namespace kernscope
