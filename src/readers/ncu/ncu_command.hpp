// The Nsight Compute command lines `kernscope record --backend ncu` runs: one profiling run that
// writes a report with what the roofline reads (ncu_profile_args), then one export per CSV page
// kernscope reads (ncu_export_args). Built here, next to the reader of what they write, so the
// flags and the parser cannot drift apart; tested without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kernscope::readers::ncu {

struct NcuRecordRequest {
  std::string ncu = "ncu";                 // the program (path or name on PATH)
  std::string report_base;                 // "-o" without extension: writes <base>.ncu-rep
  std::vector<std::string> kernel_regexes; // -k regex:... (joined with '|')
  std::int64_t launch_skip = 0;            // -s: matching launches skipped first
  std::int64_t launch_count = 0;           // -c: matching launches profiled (0: all)
  std::string nvtx_include;                // --nvtx --nvtx-include (ncu's NVTX filter grammar)
  std::vector<std::string> command;        // the program and its arguments
};

// The sections (speed of light, rooflines including the tensor one, memory, occupancy, warp
// state, launch) and the exact counters the reader prefers to the sections' rounded rates.
const std::vector<std::string>& ncu_record_sections();
const std::vector<std::string>& ncu_record_metrics();

// ncu --target-processes all --clock-control none --section ... --metrics ... [-k ...] [-s N]
// [-c N] [--nvtx --nvtx-include ...] -f -o BASE -- COMMAND...
std::vector<std::string> ncu_profile_args(const NcuRecordRequest& request);

// ncu -i BASE.ncu-rep --csv --page raw|details --print-units base --log-file OUT.
std::vector<std::string> ncu_export_args(const std::string& ncu, const std::string& report_base, const std::string& page,
                                         const std::string& csv_path);

// The CSV a page is exported to: BASE_raw.csv, BASE_details.csv.
std::string ncu_csv_path(const std::string& report_base, const std::string& page);

}  // namespace kernscope::readers::ncu
