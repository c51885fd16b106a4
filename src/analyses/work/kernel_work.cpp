// The work table providers fill, and the one loop that asks them in trust order.
#include "analyses/work/kernel_work.hpp"

#include <numeric>

namespace kernscope {

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
    case Precision::kInt8: return "int8";
    case Precision::kFp4: return "fp4";
    case Precision::kOther: return "other";
  }
  return "other";
}

double KernelWork::total_flops() const { return std::accumulate(flops.begin(), flops.end(), 0.0); }
double StepWork::total_flops() const { return std::accumulate(flops.begin(), flops.end(), 0.0); }

bool WorkTable::offer(RowIndex row, KernelWork work) {
  if (row >= slot_.size() || slot_[row] != kEmpty) return false;
  slot_[row] = static_cast<std::uint32_t>(records_.size());
  records_.push_back(std::move(work));
  return true;
}

bool WorkTable::offer_step(StepWork work) {
  for (const auto& s : steps_) {
    if (s.phase == work.phase && s.index == work.index) return false;
  }
  steps_.push_back(std::move(work));
  return true;
}

std::string WorkRequest::option(const std::string& name) const {
  auto it = options.find(name);
  return it == options.end() ? std::string() : it->second;
}

Result<WorkTable> collect_kernel_work(const Trace& trace, const std::map<std::string, std::string>& options) {
  WorkTable table(trace.kernels.size());
  const WorkRequest request{trace, options};
  for (const auto& provider : work_providers()) {
    auto filled = provider.fill(request, table);
    if (!filled) return std::unexpected(filled.error());
  }
  return table;
}

}  // namespace kernscope
