// The processes of one trace replayed together: their graphs joined into one, and each collective
// kernel made to wait for the same collective's kernels on the other processes (whatif_graph.hpp,
// join_graphs and link_collectives). A collective ends once every rank has arrived and the data has
// moved, so a change that delays one rank's arrival delays every rank's end, and a change that
// speeds one rank's compute saves only what the others do not make it wait.
#include <algorithm>
#include <map>
#include <string>

#include "analyses/whatif/whatif_graph.hpp"

namespace kernscope::whatif {
namespace {

void shift(Term& t, std::int32_t offset) {
  if (t.node != kNoNode) t.node += offset;
}

}  // namespace

Graph join_graphs(const std::vector<const Graph*>& graphs, std::vector<std::int32_t>& first_node) {
  Graph joined;
  first_node.clear();
  for (const Graph* part : graphs) {
    const Graph& g = *part;
    const auto offset = static_cast<std::int32_t>(joined.nodes.size());
    const auto wait_offset = static_cast<std::uint32_t>(joined.waits.size());
    first_node.push_back(offset);
    for (Node n : g.nodes) {
      for (Term* t : {&n.host_order, &n.launch, &n.stream, &n.cross, &n.extra}) shift(*t, offset);
      n.waits_begin += wait_offset;
      n.waits_end += wait_offset;
      joined.nodes.push_back(n);
    }
    for (Term t : g.waits) {
      shift(t, offset);
      joined.waits.push_back(t);
    }
    joined.window_start = first_node.size() == 1 ? g.window_start : std::min(joined.window_start, g.window_start);
    joined.window_end = first_node.size() == 1 ? g.window_end : std::max(joined.window_end, g.window_end);
  }
  return joined;
}

CollectiveLinks link_collectives(Graph& joined, const std::vector<std::int32_t>& first_node, const std::vector<std::int64_t>& keys) {
  CollectiveLinks links;
  // Each process's collective kernels by name, in the order they ran.
  std::map<std::int64_t, std::vector<std::vector<std::int32_t>>> by_name;  // name's key -> per process: nodes
  for (std::size_t p = 0; p < first_node.size(); ++p) {
    const std::int32_t begin = first_node[p];
    const std::int32_t end = p + 1 < first_node.size() ? first_node[p + 1] : static_cast<std::int32_t>(joined.nodes.size());
    for (std::int32_t i = begin; i < end; ++i) {
      const Node& n = joined.nodes[static_cast<std::size_t>(i)];
      if (n.kind != NodeKind::kOp || n.op != OpKind::kComm || n.removed || keys[static_cast<std::size_t>(i)] < 0) continue;
      auto& per_process = by_name[keys[static_cast<std::size_t>(i)]];
      per_process.resize(first_node.size());
      per_process[p].push_back(i);
    }
  }
  for (auto& [name, per_process] : by_name) {
    std::vector<std::vector<std::int32_t>*> ranks;
    for (auto& nodes : per_process) {
      if (nodes.empty()) continue;
      std::stable_sort(nodes.begin(), nodes.end(), [&](std::int32_t a, std::int32_t b) {
        return joined.nodes[static_cast<std::size_t>(a)].start < joined.nodes[static_cast<std::size_t>(b)].start;
      });
      ranks.push_back(&nodes);
    }
    if (ranks.size() < 2) continue;
    // Matched by order: the k-th call of a collective on each process. Where the processes ran it a
    // different number of times, the order says nothing (a window cut elsewhere, another group).
    const std::size_t count = ranks.front()->size();
    if (std::any_of(ranks.begin(), ranks.end(), [&](const auto* r) { return r->size() != count; })) {
      links.unmatched_names += 1;
      continue;
    }
    for (std::size_t k = 0; k < count; ++k) {
      TimeNs last_arrival = INT64_MIN;
      for (const auto* r : ranks) last_arrival = std::max(last_arrival, joined.nodes[static_cast<std::size_t>((*r)[k])].start);
      // A collective cannot end on a rank before the last rank arrived: where one does, these are not
      // one collective (another group's call of the same kernel, or clocks that disagree).
      const bool together = std::all_of(ranks.begin(), ranks.end(), [&](const auto* r) {
        return joined.nodes[static_cast<std::size_t>((*r)[k])].end >= last_arrival;
      });
      if (!together) {
        ++links.not_together;
        continue;
      }
      for (const auto* r : ranks) {
        Node& n = joined.nodes[static_cast<std::size_t>((*r)[k])];
        // Its transfer: from the last arrival to its end, scaled as a change scaled its own time.
        const std::int64_t traced = n.end - n.start;
        const double factor = traced > 0 ? static_cast<double>(n.duration) / static_cast<double>(traced) : 1.0;
        const auto transfer = static_cast<std::int64_t>(static_cast<double>(n.end - last_arrival) * factor);
        const auto begin = static_cast<std::uint32_t>(joined.waits.size());
        for (std::uint32_t w = n.waits_begin; w < n.waits_end; ++w) {
          const Term kept = joined.waits[w];
          joined.waits.push_back(kept);
        }
        for (const auto* peer : ranks) {
          if (peer != r) joined.waits.push_back(Term{(*peer)[k], false, transfer});
        }
        n.waits_begin = begin;
        n.waits_end = static_cast<std::uint32_t>(joined.waits.size());
        // Its own time is the transfer alone: the wait for the last rank is what the terms above say.
        n.duration = transfer;
      }
      ++links.linked;
    }
  }
  return links;
}

}  // namespace kernscope::whatif
