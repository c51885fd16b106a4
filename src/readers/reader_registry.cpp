#include "readers/reader_registry.hpp"

namespace kernscope::readers {

bool Probe::has_extension(std::string_view extension) const {
  return path.size() >= extension.size() && path.compare(path.size() - extension.size(), extension.size(), extension) == 0;
}

const std::vector<ReaderEntry>& readers() {
  static const std::vector<ReaderEntry> all = {
      nsys_sqlite_reader(),  // Nsight Systems SQLite exports, plain, gzip or xz
      nsys_rep_reader(),     // .nsys-rep / .qdrep, exported with nsys when it is on PATH
      kineto_json_reader(),  // PyTorch profiler (Kineto) and Chrome trace-event JSON, plain, gzip or xz
      ncu_csv_reader(),      // Nsight Compute `--csv --page raw|details` exports: the profiled kernels
  };
  return all;
}

}  // namespace kernscope::readers
