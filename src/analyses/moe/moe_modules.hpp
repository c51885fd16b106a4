// Mixture-of-experts layers named by the model's own Python modules, for traces whose expert and
// router kernels are generic GEMMs that no kernel name marks (a toy Switch Transformer, a model
// run eagerly): PyTorch's profiler with stacks records each module call as a Python range
// "nn.Module: <Class>_<n>". A module whose class names a router ("...Router", "...Gate",
// "...Gating": SwitchGate, MixtralTopKRouter, MoEGate) launches router work; one whose class names
// a mixture of experts ("MoE"/"Moe", "Experts": SwitchMoE, MixtralSparseMoeBlock, GptOssExperts)
// launches expert work, its GEMMs the expert GEMMs. Only class names: instance names (gate_proj,
// a Linear) never count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyses/nsys/api_lookup.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {
enum class MoeRole : std::uint8_t;
}

namespace kernscope::moe {

struct ModuleRoles {
  std::vector<std::optional<MoeRole>> role;  // per kernel row (empty: no expert module calls); nullopt: launched by none
  std::optional<MoeRole> role_of(RowIndex row) const { return role.empty() ? std::nullopt : role[row]; }
  std::vector<std::string> classes;          // the MoE and router module classes seen, sorted
  std::size_t router_calls = 0, expert_calls = 0;
};

// The roles of the kernels launched inside MoE module calls on their launching thread (kernels
// launched outside any, or whose launch is not traced, keep none). A trace without such module
// calls costs one pass over its NVTX rows.
ModuleRoles module_roles(const Trace& trace, const OpRuleSet& rules);

}  // namespace kernscope::moe
