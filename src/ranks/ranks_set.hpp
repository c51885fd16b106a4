// A set of traces read as the ranks of one distributed run: per-rank Kineto files, per-rank nsys
// exports, or one nsys export holding several processes. Each trace is reduced to a digest (its
// collectives, communication/computation totals, span) as soon as it is read, so memory follows the
// digests, not the events. Rank numbers come from the trace where it says (Kineto's
// distributedInfo), else from CUDA device ids, else from file names, else from the order given; the
// evidence used is kept per rank.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ranks/collectives.hpp"
#include "ranks/ranks_steps.hpp"
#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"

namespace kernscope::ranks {

struct RankDigest {
  std::string path;
  std::int64_t global_pid = -1;  // the process within the export, -1: the whole trace
  std::int64_t rank = -1;
  std::int64_t declared_world_size = 0;  // from the trace, 0 when it does not say
  std::string backend;                   // distributedInfo's backend
  std::string evidence;                  // how `rank` was decided
  std::vector<Note> notes;               // cut short, no NCCL kernels...
  RankCollectives collectives;          // window/layer set from `steps`
  RankSteps steps;                       // the rank's own steps
  TimeNs first_ns = 0, last_ns = 0;      // the rank's GPU activity (kernels)
  std::int64_t kernels = 0;
  std::int64_t device = -1;              // the CUDA device of its NCCL kernels (-1 unknown or several)
  std::string device_name;               // that device's name as the trace records it ("NVIDIA H200"), empty unknown
};

struct RankSet {
  std::vector<RankDigest> ranks;   // by rank
  std::int64_t world_size = 0;
  std::string world_evidence;
  std::vector<Note> notes;  // mixed runs, missing ranks, duplicates, cut short...
};

// DIR (its trace files), GLOB (shell pattern) or FILE arguments, as a sorted list without
// duplicates. An argument that names nothing is an error, unless `pass_unknown`: then it is kept as
// given (whoever opens it says what is wrong).
Result<std::vector<std::string>> expand_trace_arguments(const std::vector<std::string>& arguments, bool pass_unknown = false);

// The digests of a trace opened with read_trace_digests's event kinds: a Kineto file's collective
// arguments read (a second pass over the file: the model does not keep them), then digests_of.
// Errors name the file. `kernscope ranks` on loaded traces (Python's) digests them through this.
Result<std::vector<RankDigest>> digest_opened_trace(const Trace& trace);

// Opens one trace as the rank set reads it (kernels, API calls and NVTX in detail; a Kineto file's
// collective arguments) and digests it. `also`, when given, sees the opened trace and its digests
// before the trace is freed (the fleet digest takes its kernel totals and busy time there).
using TraceVisitor = std::function<void(const Trace&, const std::vector<RankDigest>&)>;
Result<std::vector<RankDigest>> read_trace_digests(const std::string& path, const TraceVisitor& also = {});

// Reads every trace (up to `threads` at a time; 0: one per core), each freed once digested, and
// numbers the ranks: memory follows the digests and the traces being read, not the set. `kernscope
// ranks` reads its traces this way (run_ranks.cpp). A failure names its file.
Result<RankSet> read_rank_set(const std::vector<std::string>& paths, unsigned threads = 0);

// The digests of one opened trace: one per process with NCCL kernels when it holds several,
// else one. Exposed for tests that build traces in memory.
std::vector<RankDigest> digests_of(const Trace& trace, const CommArgsLookup* args);

// Numbers ranks and checks the set (missing ranks, duplicates, mixed runs, cut short).
RankSet assemble_rank_set(std::vector<RankDigest> digests);

}  // namespace kernscope::ranks
