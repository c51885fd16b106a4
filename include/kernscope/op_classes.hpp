// Kernel -> operation class (kernscope ops). The rules are data (data/op_rules.tsv, built into the
// binary; users prepend their own with --rules): an ordered list of CLASS<TAB>REGEX, matched
// case-insensitively against demangled names, first match wins. Memory copies and sets come from
// their own tables as the classes "memcpy" and "memset".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernscope/error.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

class TextPattern;  // src/base/text_pattern.hpp

// Every class a rule may name, in display order.
const std::vector<std::string>& operation_classes();

struct OpRule {
  std::string op_class;
  std::string pattern;
  std::string origin;  // "file:line"
  std::shared_ptr<const TextPattern> matcher;  // the pattern, compiled case-insensitively
};

class OpRuleSet {
 public:
  // Parses CLASS<TAB>REGEX lines; '#' starts a comment line. Errors name the file and line.
  static Result<OpRuleSet> parse(const std::string& text, const std::string& source);
  static const OpRuleSet& builtin();
  // `first` rules take priority over `second`'s.
  static OpRuleSet combine(const OpRuleSet& first, const OpRuleSet& second);

  // The class of a kernel name and the rule that matched (nullptr: "other").
  std::pair<std::string, const OpRule*> classify(std::string_view kernel_name) const;
  std::size_t size() const { return rules_.size(); }

 private:
  std::vector<OpRule> rules_;
};

struct NcclKernel {
  std::string operation;   // AllReduce, AllGather, ReduceScatter, SendRecv, Broadcast...
  std::string reduction;   // Sum, Prod, Max, Min, PreMulSum, SumPostDiv (empty when none)
  std::string dtype;       // f32, f16, bf16, i8, u8, i32, u32, i64, u64, f8e4m3, f8e5m2
  std::string algorithm;   // RING, TREE, NVLS, NVLS_TREE, COLLNET_DIRECT, COLLNET_CHAIN, PAT
  std::string protocol;    // LL, LL128, SIMPLE
};
// ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_AllGather_RING_LL_Sum_int8_t (older order).
std::optional<NcclKernel> parse_nccl_kernel(std::string_view name);

struct KernelClassification {
  std::string name;
  std::string op_class;     // after phase resolution where all instances agree, else "attention*"
  std::string rule;         // origin of the matching rule, empty for "other"
  std::int64_t instances = 0;
  std::int64_t total_ns = 0;
  std::optional<NcclKernel> nccl;
};

struct OpClassTotal {
  std::string op_class;
  std::int64_t total_ns = 0;
  std::int64_t instances = 0;
  std::int64_t kernels = 0;  // distinct kernel names (memcpy/memset: distinct operations)
};

// The class of GPU time traced as whole CUDA graphs (nsys's default --cuda-graph-trace=graph), whose
// kernels are not itemized: ops', the steps' and the account's name for it, and whatif's scale=.
inline constexpr const char* kWholeGraphClass = "cuda graph (not itemized)";

struct OpsResult {
  std::vector<OpClassTotal> classes;           // total time descending
  std::vector<KernelClassification> kernels;   // total time descending
  std::int64_t total_ns = 0;
  double other_share = 0;                      // share of GPU time classed "other"
  std::string phase_source;                    // how attention phases were told apart
  std::string setup_note;                      // GPU work before the first step, left out (empty: none)
  std::int64_t setup_kernels = 0;              // kernels left out as setup (analyses/steps/setup_split.hpp)
  std::int64_t setup_copies = 0;               // copies left out as setup
};

// Classifies every kernel (and memory operation) of the trace.
Result<OpsResult> classify_operations(const Trace& trace, const OpRuleSet& rules);
// "Class,Time (%),Total Time (ns),Instances,Kernels", one row per class by total time.
Table ops_table(const OpsResult& result);
Table ops_detail_table(const OpsResult& result);

}  // namespace kernscope
