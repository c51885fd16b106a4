#pragma once

#include "kernscope/reports.hpp"

namespace kernscope::report {

Result<Table> cuda_gpu_kern_sum(const Trace& trace, const ReportRequest& request);
Result<Table> cuda_api_sum(const Trace& trace, const ReportRequest& request);
Result<Table> osrt_sum(const Trace& trace, const ReportRequest& request);
Result<Table> cuda_gpu_mem_time_sum(const Trace& trace, const ReportRequest& request);
Result<Table> cuda_gpu_mem_size_sum(const Trace& trace, const ReportRequest& request);
Result<Table> cuda_api_gpu_sum(const Trace& trace, const ReportRequest& request);

}  // namespace kernscope::report
