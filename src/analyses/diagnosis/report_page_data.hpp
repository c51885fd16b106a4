// What report's HTML page shows beyond the diagnosis, computed here so that the page only draws:
// the duration distributions of the kernels with the most time, and the launching thread's
// sampled host stacks by group of steps (the same profile as `kernscope host`). Only the page
// asks for it: text and JSON reports pay only for keeping the kernel tail's rows (a row a name).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "analyses/diagnosis/diagnosis.hpp"
#include "analyses/steps/host_profile.hpp"
#include "analyses/tail.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

inline constexpr std::size_t kReportPageKernelsDrawn = 10;  // kernels drawn as distributions

struct ReportPageData {
  std::vector<DurationDistribution> distributions;  // of the first kReportPageKernelsDrawn of kernel_tail_by_total
  std::optional<HostProfile> host;                  // where the trace holds sampled host stacks
};

ReportPageData report_page_data(const Trace& trace, const Diagnosis& diagnosis);

}  // namespace kernscope
