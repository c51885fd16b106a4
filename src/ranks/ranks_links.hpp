// The peak bandwidth of the link between a rank's GPU and its peers, against which bus bandwidth is
// read (nccl-tests' busBW is comparable to one GPU's per-direction link peak). The table is
// data/link_peaks.tsv, compiled in; rows are matched to the device name the trace records.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/error.hpp"

namespace kernscope::ranks {

struct LinkPeak {
  std::string name, match, link, source;
  double bytes_per_s = 0;  // per direction, per GPU
  int line = 0;            // in data/link_peaks.tsv
};

// Parses the table's text (comments '#', a header line, then rows); errors name the line.
Result<std::vector<LinkPeak>> parse_link_peaks(const std::string& text);
const std::vector<LinkPeak>& builtin_link_peaks();

// The row for a device name: all of a row's words in the name, the row with most words winning;
// nullopt when none matches or two rows tie.
std::optional<LinkPeak> match_link_peak(std::string_view device_name, const std::vector<LinkPeak>& rows);

}  // namespace kernscope::ranks
