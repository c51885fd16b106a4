// What kind of work a trace holds, decided from evidence in the trace and saying which: only LLM
// inference gets prefill/decode phases, TTFT/TPOT and the LLM rules and advice.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

enum class WorkloadKind { kLlmInference, kTraining, kInference, kBenchmark, kUnknown };

// "llm_inference", "training", "inference", "benchmark", "unknown" (report JSON's workload.kind).
std::string_view workload_name(WorkloadKind kind);

struct Workload {
  WorkloadKind kind = WorkloadKind::kUnknown;
  std::vector<std::string> evidence;  // sentences with the numbers behind the decision
};

// What the decision reads besides the trace's names: GPU kernel time by operation class, and
// whether step annotations named prefill or decode phases.
struct WorkloadSignals {
  std::map<std::string, std::int64_t> class_ns;
  bool annotated_phases = false;
};

Workload recognize_workload(const Trace& trace, const WorkloadSignals& signals);

}  // namespace kernscope
