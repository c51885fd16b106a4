#include "model/token_grids.hpp"

#include <unordered_map>

namespace kernscope {

bool launches_one_block_per_token(std::string_view name) {
  for (std::string_view kernel : {"reshape_and_cache_kernel", "reshape_and_cache_flash_kernel", "concat_and_cache_mla_kernel"}) {
    if (name.find(kernel) != std::string_view::npos) return true;
  }
  return false;
}

void token_grids_from_grids(KernelColumns& k, const StringPool& strings) {
  k.token_grid.clear();
  if (k.grid_x.size() != k.size()) return;
  std::unordered_map<StringId, bool> per_name;
  for (RowIndex i = 0; i < k.size(); ++i) {
    auto [it, fresh] = per_name.try_emplace(k.demangled_name[i], false);
    if (fresh) it->second = launches_one_block_per_token(strings.get(k.demangled_name[i]));
    if (!it->second) continue;
    if (k.token_grid.empty()) k.token_grid.assign(k.size(), 0);
    k.token_grid[i] = k.grid_x[i];
  }
}

}  // namespace kernscope
