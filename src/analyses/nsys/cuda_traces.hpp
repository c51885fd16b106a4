#pragma once

#include "kernscope/reports.hpp"

namespace kernscope::report {

Result<Table> cuda_gpu_trace(const Trace& trace, const ReportRequest& request);
Result<Table> cuda_api_trace(const Trace& trace, const ReportRequest& request);
Result<Table> cuda_kern_exec_sum(const Trace& trace, const ReportRequest& request);

}  // namespace kernscope::report
