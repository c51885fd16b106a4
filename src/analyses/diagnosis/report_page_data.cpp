#include "analyses/diagnosis/report_page_data.hpp"

namespace kernscope {

ReportPageData report_page_data(const Trace& trace, const Diagnosis& diagnosis) {
  ReportPageData out;
  out.distributions = duration_distributions(trace, diagnosis.kernel_tail_by_total, kReportPageKernelsDrawn);
  if (trace.host.samples.size() > 0) out.host = host_profile_of(trace, diagnosis.steps.steps, diagnosis.steps.method, {});
  return out;
}

}  // namespace kernscope
