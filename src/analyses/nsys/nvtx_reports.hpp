#pragma once

#include "kernscope/reports.hpp"

namespace kernscope::report {

Result<Table> nvtx_sum(const Trace& trace, const ReportRequest& request);
Result<Table> nvtx_pushpop_sum(const Trace& trace, const ReportRequest& request);
Result<Table> nvtx_startend_sum(const Trace& trace, const ReportRequest& request);
Result<Table> nvtx_kern_sum(const Trace& trace, const ReportRequest& request);
Result<Table> nvtx_gpu_proj_sum(const Trace& trace, const ReportRequest& request);

}  // namespace kernscope::report
