// Reading a set of traces as ranks: expanding the arguments, one digest per rank, numbering and
// checking the set.
#include "ranks/ranks_set.hpp"

#include <glob.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/progress.hpp"
#include "base/text_pattern.hpp"
#include "ranks/collectives_kineto_args.hpp"
#include "kernscope/open.hpp"

namespace kernscope::ranks {
namespace {

namespace fs = std::filesystem;

bool looks_like_trace(const fs::path& p) {
  const std::string name = p.filename().string();
  for (std::string_view ext : {".json", ".json.gz", ".json.xz", ".sqlite", ".sqlite.gz", ".sqlite.xz", ".nsys-rep"}) {
    if (name.ends_with(ext)) return true;
  }
  return false;
}

std::string joined_numbers(const std::vector<std::int64_t>& values, std::size_t limit = 16) {
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < limit; ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  if (values.size() > limit) out += ", ... (" + std::to_string(values.size()) + " in all)";
  return out;
}

// A rank number in a file name: rank3, rank-3, rank_03, RANK3 (the last such match).
std::int64_t rank_in_file_name(const std::string& path) {
  static const auto pattern = TextPattern::literal(R"((?:^|[^a-zA-Z])(?:rank|RANK|Rank)[-_.]?(\d+))");
  const std::string name = fs::path(path).filename().string();
  std::int64_t found = -1;
  for (auto m = pattern.find(name); m; m = pattern.find(name, m->end() > m->start() ? m->end() : m->end() + 1)) {
    found = std::stoll(std::string(m->group(1)));
  }
  return found;
}

// The readers' notes of a file, a capture window or a compressed stream cut short.
bool cut_short(const Trace& trace) {
  return trace.has_note("cut_short") || trace.has_note("capture_window_cut_short") || trace.has_note("compressed_stream_cut_short");
}

}  // namespace

Result<std::vector<std::string>> expand_trace_arguments(const std::vector<std::string>& arguments, bool pass_unknown) {
  if (arguments.empty()) return make_error(ErrorCode::kInvalidArgument, "no traces given (DIR, GLOB or FILES)");
  std::set<std::string> seen;
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (seen.insert(p).second) out.push_back(p);
  };
  for (const auto& arg : arguments) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(arg, ec)) {
        if (entry.is_regular_file(ec) && looks_like_trace(entry.path())) files.push_back(entry.path().string());
      }
      if (files.empty()) return make_error(ErrorCode::kNotFound, "no trace files (.json, .sqlite, .nsys-rep, plain or .gz/.xz) in " + arg);
      std::sort(files.begin(), files.end());
      for (const auto& f : files) add(f);
    } else if (arg.find_first_of("*?[") != std::string::npos && !fs::exists(arg, ec)) {
      glob_t g{};
      const int rc = ::glob(arg.c_str(), 0, nullptr, &g);
      std::vector<std::string> files;
      if (rc == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
      }
      ::globfree(&g);
      if (files.empty()) return make_error(ErrorCode::kNotFound, "no file matches " + arg);
      std::sort(files.begin(), files.end());
      for (const auto& f : files) add(f);
    } else if (fs::exists(arg, ec) || pass_unknown) {
      add(arg);
    } else {
      return make_error(ErrorCode::kNotFound, "no such file or directory: " + arg);
    }
  }
  return out;
}

std::vector<RankDigest> digests_of(const Trace& trace, const CommArgsLookup* args) {
  const auto& k = trace.kernels;
  // Processes with NCCL kernels, and the devices they ran them on.
  std::map<std::int64_t, std::set<std::uint32_t>> nccl_devices;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (!nccl_kernel_name(trace, i).empty()) {
      nccl_devices[k.global_pid[i]].insert(k.device_id[i]);
    }
  }
  std::vector<std::int64_t> pids;
  if (nccl_devices.size() > 1) {
    for (const auto& [pid, devices] : nccl_devices) pids.push_back(pid);
  } else {
    pids.push_back(-1);
  }
  std::vector<RankDigest> out;
  for (std::int64_t pid : pids) {
    RankDigest d;
    d.path = trace.source.path;
    d.global_pid = pid;
    if (trace.source.distributed && pid == -1) {
      d.rank = trace.source.distributed->rank;
      d.declared_world_size = trace.source.distributed->world_size;
      d.backend = trace.source.distributed->backend;
    }
    d.collectives = collectives_of(trace, pid, args);
    // The rank's own steps, and each collective's step and position within it (by its launch).
    d.steps = rank_steps_of(trace, pid);
    {
      std::int64_t current = -1, position = 0;
      for (auto& c : d.collectives.items) {
        c.window = step_index_at(d.steps, c.launch_ns != kNoTime ? c.launch_ns : c.start_ns);
        if (c.window < 0) continue;
        position = c.window == current ? position + 1 : 0;
        current = c.window;
        c.layer = position;
      }
    }
    bool any = false;
    for (RowIndex i = 0; i < k.size(); ++i) {
      if (pid != -1 && k.global_pid[i] != pid) continue;
      ++d.kernels;
      d.first_ns = any ? std::min(d.first_ns, k.start_ns[i]) : k.start_ns[i];
      d.last_ns = any ? std::max(d.last_ns, k.end_ns[i]) : k.end_ns[i];
      any = true;
    }
    auto devices = nccl_devices.find(pid);
    if (pid == -1 && nccl_devices.size() == 1) devices = nccl_devices.begin();
    if (devices != nccl_devices.end() && devices->second.size() == 1) d.device = *devices->second.begin();
    // The device's name (the link peak is looked up by it): the NCCL device's entry, else the one
    // name every device of the trace shares.
    std::set<std::string> names;
    for (const auto& dev : trace.devices) {
      if (d.device >= 0 && (dev.id == d.device || dev.cuda_id == d.device)) d.device_name = dev.name;
      if (!dev.name.empty()) names.insert(dev.name);
    }
    if (d.device_name.empty() && names.size() == 1) d.device_name = *names.begin();
    // Kind cut_short as the readers name it: the set passes it on per rank (assemble_rank_set).
    if (cut_short(trace)) d.notes.push_back({"cut_short", NoteSeverity::kDataLoss, "the trace is cut short (its program was killed?)"});
    if (d.collectives.items.empty()) d.notes.push_back({"no_nccl_kernels", NoteSeverity::kInfo, "no NCCL kernels"});
    out.push_back(std::move(d));
  }
  return out;
}

RankSet assemble_rank_set(std::vector<RankDigest> digests) {
  RankSet set;
  // Several digests from one file: ranks of one export, numbered by device id (then process).
  std::map<std::string, std::vector<RankDigest*>> by_file;
  for (auto& d : digests) by_file[d.path].push_back(&d);
  bool all_declared = true;
  for (auto& d : digests) all_declared = all_declared && d.rank >= 0;

  if (!all_declared) {
    // Traces that do not say their rank: CUDA device ids if they are distinct, else numbers in
    // file names if distinct, else the order given.
    std::vector<RankDigest*> unknown;
    for (auto& d : digests) {
      if (d.rank < 0) unknown.push_back(&d);
    }
    auto distinct = [&](auto key) {
      std::set<std::int64_t> values;
      for (auto* d : unknown) {
        const std::int64_t v = key(*d);
        if (v < 0 || !values.insert(v).second) return false;
      }
      return true;
    };
    const bool one_export = by_file.size() == 1 && digests.size() > 1;
    if (distinct([](const RankDigest& d) { return d.device; })) {
      for (auto* d : unknown) {
        d->rank = d->device;
        d->evidence = one_export ? "one export holding " + std::to_string(digests.size()) + " processes: process " +
                                       std::to_string(pid_of(d->global_pid)) + " on CUDA device " + std::to_string(d->device) + ", ranks by device id"
                                 : "CUDA device id " + std::to_string(d->device) + " of its NCCL kernels";
      }
    } else if (distinct([](const RankDigest& d) { return rank_in_file_name(d.path); })) {
      for (auto* d : unknown) {
        d->rank = rank_in_file_name(d->path);
        d->evidence = "file name";
      }
    } else {
      std::int64_t next = 0;
      std::set<std::int64_t> taken;
      for (const auto& d : digests) {
        if (d.rank >= 0) taken.insert(d.rank);
      }
      for (auto* d : unknown) {
        while (taken.contains(next)) ++next;
        d->rank = next++;
        d->evidence = "order given (the trace names no rank)";
      }
    }
  }
  for (auto& d : digests) {
    if (d.evidence.empty()) {
      d.evidence = "distributedInfo (rank " + std::to_string(d.rank) + " of " + std::to_string(d.declared_world_size) + ")";
    }
  }

  // Checks: the same rank twice, different declared world sizes (mixed runs), missing ranks.
  std::map<std::int64_t, std::vector<std::string>> claims;
  for (const auto& d : digests) claims[d.rank].push_back(d.path);
  for (const auto& [rank, paths] : claims) {
    if (paths.size() > 1) {
      std::string files;
      for (const auto& p : paths) files += (files.empty() ? "" : ", ") + fs::path(p).filename().string();
      set.notes.push_back({"rank_claimed_twice", NoteSeverity::kInfo,
                           "mixed runs? rank " + std::to_string(rank) + " is claimed by " + std::to_string(paths.size()) + " traces (" + files + ")",
                           static_cast<std::int64_t>(paths.size())});
    }
  }
  std::set<std::int64_t> worlds;
  for (const auto& d : digests) {
    if (d.declared_world_size > 0) worlds.insert(d.declared_world_size);
  }
  if (worlds.size() > 1) {
    std::vector<std::int64_t> sizes(worlds.begin(), worlds.end());
    set.notes.push_back({"world_sizes_differ", NoteSeverity::kInfo,
                         "mixed runs: the traces declare different world sizes (" + joined_numbers(sizes) + ")"});
  }
  std::int64_t max_rank = -1;
  for (const auto& d : digests) max_rank = std::max(max_rank, d.rank);
  if (!worlds.empty()) {
    set.world_size = *worlds.rbegin();
    set.world_evidence = "distributedInfo world_size";
  } else {
    set.world_size = max_rank + 1;
    set.world_evidence = "highest rank + 1 (no trace declares a world size)";
  }
  std::vector<std::int64_t> missing;
  for (std::int64_t r = 0; r < set.world_size; ++r) {
    if (!claims.contains(r)) missing.push_back(r);
  }
  if (!missing.empty()) {
    set.notes.push_back({"missing_ranks", NoteSeverity::kDataLoss,
                         "missing ranks: " + joined_numbers(missing) + " (world size " + std::to_string(set.world_size) + ", " +
                             std::to_string(claims.size()) + " present)",
                         static_cast<std::int64_t>(missing.size())});
  }
  for (const auto& d : digests) {
    for (const auto& n : d.notes) {
      if (n.kind == "cut_short") set.notes.push_back(note_from("rank " + std::to_string(d.rank) + ": ", n));
    }
  }
  std::stable_sort(digests.begin(), digests.end(), [](const RankDigest& a, const RankDigest& b) { return a.rank < b.rank; });
  set.ranks = std::move(digests);
  return set;
}

Result<std::vector<RankDigest>> read_trace_digests(const std::string& path, const TraceVisitor& also) {
  OpenOptions options;
  options.kinds = bit(EventKind::kKernels) | bit(EventKind::kApiCalls) | bit(EventKind::kNvtx);  // NVTX: ProfilerStep#N
  // Kernels in detail: stream ids (the fallback communicator); NVTX and API calls in detail:
  // the rank's steps (ranks_steps.hpp) as `kernscope steps` finds them.
  options.detail_kinds = bit(EventKind::kKernels) | bit(EventKind::kNvtx) | bit(EventKind::kApiCalls);
  // A rank's file cut short (a hung or killed job) is read as far as it goes: the set names the cut rank.
  options.partial = true;
  auto trace = open_trace(path, options);
  if (!trace) return make_error(trace.error().code, trace.error().message);  // it names the file
  auto digests = digest_opened_trace(*trace);
  if (digests && also) also(*trace, *digests);
  return digests;
}

Result<std::vector<RankDigest>> digest_opened_trace(const Trace& trace) {
  std::optional<CommArgsLookup> args;
  if (trace.source.format.starts_with("kineto")) {
    auto read = read_kineto_comm_args(trace.source.path);
    if (!read) return make_error(read.error().code, trace.source.path + ": " + read.error().message);
    args = std::move(*read);
  }
  return digests_of(trace, args ? &*args : nullptr);
}

Result<RankSet> read_rank_set(const std::vector<std::string>& paths, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(paths.size()));
  std::vector<std::vector<RankDigest>> per_file(paths.size());
  std::vector<std::optional<Error>> errors(paths.size());
  std::atomic<std::size_t> next{0};
  progress::Meter meter("reading traces", "traces", paths.size());
  auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      auto digests = read_trace_digests(paths[i]);
      meter.add(1);
      if (!digests) {
        errors[i] = digests.error();
        continue;
      }
      per_file[i] = std::move(*digests);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (errors[i]) return std::unexpected(*errors[i]);  // the first in the order given; it names its file
  }
  std::vector<RankDigest> digests;
  for (auto& v : per_file) {
    for (auto& d : v) digests.push_back(std::move(d));
  }
  return assemble_rank_set(std::move(digests));
}

}  // namespace kernscope::ranks
