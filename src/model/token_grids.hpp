// Kernels that launch one block per new token, so that their grid's x is the number of tokens of the
// forward pass that launched them: vLLM's KV-cache writes (reshape_and_cache, reshape_and_cache_flash,
// concat_and_cache_mla), which its csrc/cache_kernels.cu launches with `dim3 grid(num_tokens)` (on a
// public vLLM trace their grid equals the step's annotated token count, 8,192). The readers keep
// these kernels' grids in KernelColumns::token_grid whatever else they read; the step finder reads
// a step's tokens from them (analyses/steps/step_phases.hpp).
#pragma once

#include <string_view>

#include "kernscope/trace.hpp"

namespace kernscope {

bool launches_one_block_per_token(std::string_view demangled_name);

// Fills k.token_grid from k.grid_x (which must be read whole) for the kernels that launch one block
// per token; leaves it empty where none does.
void token_grids_from_grids(KernelColumns& k, const StringPool& strings);

}  // namespace kernscope
