// `kernscope diff --format html`: what changed between A and B as a page: the headline, waterfalls
// from A's kernel time to B's by operation class and by kernel, and the diff's tables, sortable.
#pragma once

#include <string>
#include <vector>

#include "analyses/diff/diff.hpp"
#include "kernscope/table.hpp"

namespace kernscope {

// `tables`: the diff's tables as run_diff made them (phases, classes, kernels, tails, NVTX, gates).
std::string render_diff_html(const DiffResult& diff, const std::vector<Table>& tables);

}  // namespace kernscope
