// Mixture-of-experts layers read from a trace (`kernscope moe`): the kernels of each MoE
// role (routed-expert GEMMs, router/top-k, token permute/align, dispatch/combine communication) by
// the names engines give them (data/moe_roles.tsv), the layers they form (one router invocation
// starts a layer, counted in launch order within each step), and how much of the dispatch/combine
// time no compute hides. Tokens per expert come from per-expert shapes (an eager per-expert loop
// under record_shapes: each expert's aten::select of its weights and its aten::linear's rows); where
// the trace has none (grouped/fused expert kernels, graph replays) the result says so rather than
// guessing. The perfect-router estimate (perfect_router.hpp) needs a step replay, so the session
// fills it in after this analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/text_pattern.hpp"
#include "kernscope/error.hpp"
#include "kernscope/notes.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/table.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// One byte: analyses keep a role (optional) per kernel row, millions of them.
enum class MoeRole : std::uint8_t { kDispatchCombine, kExpertGemm, kRouter, kPermute, kOther };
inline constexpr int kMoeRoles = 5;
std::string_view moe_role_name(MoeRole role);

// The built-in roles (data/moe_roles.tsv, compiled in); the role of a kernel name, or nullopt.
class MoeRoleRules {
 public:
  static const MoeRoleRules& builtin();
  static Result<MoeRoleRules> parse(const std::string& text, const std::string& source);
  std::optional<MoeRole> role_of(std::string_view name) const;

 private:
  struct Rule {
    MoeRole role;
    TextPattern matcher;
  };
  std::vector<Rule> rules_;
};

struct MoeRoleTotal {
  MoeRole role = MoeRole::kOther;
  std::int64_t kernels = 0;
  std::int64_t ns = 0;
  double share = 0;  // of all kernel time
  std::vector<std::pair<std::string, std::int64_t>> top_names;  // the role's largest names by time
};

struct MoeExpert {
  std::int64_t expert = 0;
  std::int64_t tokens = 0;
  std::int64_t time_ns = 0;
};

// One expert of one layer in one step (the csv's rows): tokens and expert-GEMM time.
struct MoeExpertStep {
  std::int64_t step = -1;  // index into StepAnalysis::steps; -1: outside every step
  std::int64_t layer = 0, expert = 0, tokens = 0, time_ns = 0;
};

struct MoeLayer {
  std::int64_t layer = 0;        // in forward order within a step, from 0
  std::int64_t invocations = 0;  // steps (or passes) in which this layer ran
  std::int64_t ns[kMoeRoles] = {0, 0, 0, 0, 0};
  std::vector<MoeExpert> experts;  // empty where the trace does not show tokens per expert
  std::optional<double> imbalance;  // max / mean tokens per expert
};

// perfect_router.hpp has the model.
struct PerfectRouter {
  bool estimated = false;
  std::int64_t step_ns = 0, predicted_step_ns = 0;  // medians of the steadiest step group, traced and replayed
  double saving_pct = 0;  // (step - predicted) / step; negative: even routing would be slower
  std::string verdict;  // ">= 10 %: routing imbalance is the bottleneck" / "< 10 %: ..."
  std::string why_not;  // when not estimated
  // The model's figures, measured in the trace.
  std::int64_t iterations = 0;       // expert iterations measured
  std::int64_t invocations = 0;      // layer invocations edited
  double experts_hit = 0, experts_even = 0;  // per layer invocation, mean: traced and with even routing
  std::int64_t host_per_iteration_ns = 0;    // median spacing of consecutive iterations
  double gpu_per_iteration_ns = 0, gpu_per_token_ns = 0;  // the fit g0 + g1 x tokens
  std::string group;  // the step group whose medians are compared
  std::vector<Note> notes;  // the replay's, added to the analysis's notes (their texts led by "perfect-router replay: ")
};

struct MoeAnalysis {
  bool present = false;
  std::string evidence;  // why the trace is (or is not) said to hold MoE layers
  std::int64_t kernel_ns = 0;  // all kernels' time, the shares' denominator
  std::vector<MoeRoleTotal> roles;  // in MoeRole order, roles without kernels left out
  std::vector<MoeLayer> layers;
  std::string layers_from;  // how layers were told apart
  std::int64_t dispatch_combine_ns = 0;          // union over time, per device
  std::int64_t dispatch_combine_exposed_ns = 0;  // of it, when no other kernel ran on the device
  std::string tokens_per_expert;  // where tokens per expert come from, or why the trace has none
  std::vector<MoeExpertStep> expert_steps;  // where tokens per expert are shown: by step, layer, expert
  PerfectRouter perfect_router;
  std::vector<Note> notes;
};

// The layer whose tokens per expert are the most uneven (largest max/mean), or nullptr where no
// layer shows tokens per expert.
const MoeLayer* most_skewed_layer(const MoeAnalysis& moe);

namespace moe {
struct EagerExperts;
}

// `steps` gives each kernel's step (StepAnalysis::kernel_step), so layers count within a step.
// `eager`: the trace's eager expert loop (eager_experts.hpp), read by the caller that needs it too.
Result<MoeAnalysis> analyze_moe(const Trace& trace, const OpRuleSet& rules, const StepAnalysis& steps, const moe::EagerExperts& eager,
                                const MoeRoleRules& roles = MoeRoleRules::builtin());

Table moe_roles_table(const MoeAnalysis& moe);
Table moe_layers_table(const MoeAnalysis& moe);
Table moe_expert_steps_table(const MoeAnalysis& moe);

}  // namespace kernscope
