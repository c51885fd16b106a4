// The cross-rank analysis as tables (CSV/JSON, Python frames), as one JSON document, and as the
// one-screen text view.
#pragma once

#include <string>
#include <vector>

#include "ranks/ranks_skew.hpp"
#include "kernscope/table.hpp"
#include "kernscope/time_units.hpp"

namespace kernscope::ranks {

// Tables, in this order: ranks, collective_kinds, stragglers, collectives, incomplete, skew_over_time,
// skew_by_step, rank_steps, slowest_rank_steps, skew_by_layer.
std::vector<Table> ranks_tables(const RankSet& set, const RanksAnalysis& analysis);

std::string ranks_text(const RankSet& set, const RanksAnalysis& analysis);
std::string ranks_json(const RankSet& set, const RanksAnalysis& analysis, TimeUnit unit);

}  // namespace kernscope::ranks
