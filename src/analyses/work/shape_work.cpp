// kineto-shapes and nvtx-shapes: operator costs (shape_flops) joined to the kernels they launched.
#include "analyses/work/shape_work.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include "analyses/nsys/api_lookup.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "analyses/work/shape_flops.hpp"

namespace kernscope {
namespace {

using shapes::ElementType;
using shapes::OpArgs;
using shapes::OpCost;

// An operator range that may own kernels.
struct Candidate {
  std::int64_t global_tid = 0;
  TimeNs start_ns = 0, end_ns = 0;
  std::int64_t external_id = 0;
  std::string_view name;
  std::int32_t cost = -1;  // index into the provider's costs; -1: no formula fits
};

// What a kernel name says of its element type (emit_nvtx records none): the first hint found.
std::optional<ElementType> type_hint(std::string_view kernel) {
  auto has = [&](std::string_view s) { return kernel.find(s) != std::string_view::npos; };
  if (has("bf16") || has("BFloat16") || has("bfloat16")) return ElementType{Precision::kBf16, 2};
  if (has("fp16") || has("f16") || has("Half") || has("__half")) return ElementType{Precision::kFp16, 2};
  if (has("e4m3") || has("e5m2") || has("fp8") || has("Float8")) return ElementType{Precision::kFp8, 1};
  if (has("tf32")) return ElementType{Precision::kFp32, 4};
  if (has("sgemm") || has("fp32") || has("f32f32")) return ElementType{Precision::kFp32, 4};
  // PyTorch's type-erased copies (cat, index) name only the element size: OpaqueType<4u>.
  if (const std::size_t at = kernel.find("OpaqueType<"); at != std::string_view::npos) {
    int bytes = 0;
    const char* first = kernel.data() + at + 11;
    auto [end, ec] = std::from_chars(first, kernel.data() + kernel.size(), bytes);
    if (ec == std::errc() && end != first && bytes > 0 && bytes <= 16) return ElementType{Precision::kOther, bytes};
  }
  return std::nullopt;
}

struct Join {
  std::vector<std::int32_t> op_of_kernel;      // nearest candidate with a cost, -1 none
  std::vector<std::int32_t> innermost_of_kernel;  // innermost candidate whatever its cost, -1 none
};

// Kernels -> candidates: Kineto's External id when it names a costed operator, else the costed
// operator nearest around the launching API call (same thread, range contains the call).
Join join_kernels(const Trace& trace, const std::vector<Candidate>& ops) {
  const auto& k = trace.kernels;
  Join join{std::vector<std::int32_t>(k.size(), -1), std::vector<std::int32_t>(k.size(), -1)};
  std::unordered_map<std::int64_t, std::int32_t> by_external;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].external_id > 0 && ops[i].cost >= 0) {
      auto [it, inserted] = by_external.emplace(ops[i].external_id, static_cast<std::int32_t>(i));
      if (!inserted) it->second = -2;  // not unique: do not trust it
    }
  }
  std::vector<report::IndexedRange> ranges;
  ranges.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ranges.push_back({static_cast<RowIndex>(i), ops[i].start_ns, ops[i].end_ns, ops[i].global_tid, std::string(), true});
  }
  const report::ApiLookup lookup(trace.api_calls);
  const auto& a = trace.api_calls;
  std::vector<report::Interval> queries;
  std::vector<RowIndex> kernel_of_query;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (!k.external_id.empty() && k.external_id[i] > 0) {
      auto it = by_external.find(k.external_id[i]);
      // Old traces number kernels' External ids otherwise (as correlation ids): an operator that
      // started after the kernel cannot have launched it.
      if (it != by_external.end() && it->second >= 0 && ops[static_cast<std::size_t>(it->second)].start_ns <= k.start_ns[i]) {
        join.op_of_kernel[i] = join.innermost_of_kernel[i] = it->second;
        continue;
      }
    }
    if (auto r = lookup.find(k.global_pid[i], k.correlation_id[i])) {
      queries.push_back({a.global_tid[*r], a.start_ns[*r], a.end_ns[*r]});
      kernel_of_query.push_back(i);
    }
  }
  // Innermost = latest start, then earliest end.
  auto inner = [&](std::int32_t current, std::size_t r) {
    if (current < 0) return true;
    const auto& c = ops[static_cast<std::size_t>(current)];
    return ops[r].start_ns > c.start_ns || (ops[r].start_ns == c.start_ns && ops[r].end_ns < c.end_ns);
  };
  report::find_enclosing(ranges, queries, [&](std::size_t q, std::size_t r) {
    const RowIndex kernel = kernel_of_query[q];
    if (inner(join.innermost_of_kernel[kernel], r)) join.innermost_of_kernel[kernel] = static_cast<std::int32_t>(r);
    if (ops[r].cost >= 0 && inner(join.op_of_kernel[kernel], r)) join.op_of_kernel[kernel] = static_cast<std::int32_t>(r);
  });
  return join;
}

std::string_view kernel_name(const Trace& trace, RowIndex i) {
  return trace.strings.get(trace.kernels.shown_name(i));
}

// Offers each operator's cost to its longest kernel and no work to its other kernels.
// `cost_for(op, kernels)` gives the cost of an operator once its kernels are known.
template <class CostFor>
void offer_to_kernels(const Trace& trace, const std::vector<Candidate>& ops, const Join& join, std::string_view source,
                  CostFor&& cost_for, WorkTable& table) {
  const auto& k = trace.kernels;
  std::map<std::int32_t, std::vector<RowIndex>> kernels_of_op;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (join.op_of_kernel[i] >= 0) kernels_of_op[join.op_of_kernel[i]].push_back(i);
  }
  std::int64_t offered = 0, kernels = 0;
  for (const auto& [op, rows] : kernels_of_op) {
    const std::optional<OpCost> cost = cost_for(ops[static_cast<std::size_t>(op)], rows);
    if (!cost) continue;
    // The work is the longest kernel's (the GEMM or attention kernel); the operator's other kernels
    // (fills, split-K reductions) are known to do none of it: covered, with no work of their own.
    const RowIndex longest = *std::max_element(rows.begin(), rows.end(), [&](RowIndex x, RowIndex y) {
      return k.end_ns[x] - k.start_ns[x] < k.end_ns[y] - k.start_ns[y];
    });
    for (RowIndex r : rows) {
      KernelWork work;
      if (r == longest) {
        work.flops = cost->flops;
        work.bytes = cost->bytes;
      }
      // FP32 matrix math runs on TF32 tensor cores when the kernel says so (allow_tf32).
      const std::string_view name = kernel_name(trace, r);
      if (name.find("tf32") != std::string_view::npos) {
        work.flops[static_cast<std::size_t>(Precision::kTf32)] += work.flops[static_cast<std::size_t>(Precision::kFp32)];
        work.flops[static_cast<std::size_t>(Precision::kFp32)] = 0;
      }
      work.bytes_kind = BytesKind::kMinimum;
      work.source = source;
      work.detail = rows.size() == 1 ? cost->detail
                    : fmt::format("{} ({} of its {} kernels)", cost->detail, r == longest ? "the longest" : "a helper", rows.size());
      ++kernels;
      offered += table.offer(r, std::move(work)) ? 1 : 0;
    }
  }
  // Operators around kernels that no formula covers: the largest by GPU time, so users know what is missing.
  std::map<std::string_view, std::int64_t> uncovered_ns;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (join.op_of_kernel[i] < 0 && join.innermost_of_kernel[i] >= 0 && !table.has(i)) {
      uncovered_ns[ops[static_cast<std::size_t>(join.innermost_of_kernel[i])].name] += k.end_ns[i] - k.start_ns[i];
    }
  }
  std::vector<std::pair<std::string_view, std::int64_t>> top(uncovered_ns.begin(), uncovered_ns.end());
  std::sort(top.begin(), top.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string missing;
  for (std::size_t i = 0; i < top.size() && i < 5; ++i) {
    missing += fmt::format("{}{} ({:.1f} us)", i == 0 ? "" : ", ", top[i].first, top[i].second / 1000.0);
  }
  table.note({"shapes_joined", NoteSeverity::kInfo,
              fmt::format("{}: {} kernels of {} operators with shapes{}{}", source, kernels, kernels_of_op.size(),
                          offered < kernels ? fmt::format(" ({} already had work from a more trusted source)", kernels - offered) : "",
                          missing.empty() ? "" : "; operators without a formula around other kernels: " + missing)});
}

}  // namespace

Result<void> fill_kineto_shape_work(const WorkRequest& request, WorkTable& table) {
  const Trace& trace = request.trace;
  const auto& o = trace.op_shapes;
  if (o.size() == 0 || trace.kernels.size() == 0) return {};
  // Operators repeat with the same shapes: each distinct (name, dims, types, values) is costed once.
  // Operators repeat with the same shapes: each distinct (name, dims, types, values) is costed once.
  // A few record no element type (aten::cat's TensorList): those are costed once their kernels are
  // known, with the type the kernel name states, and left out when it states none.
  struct Costed {
    OpArgs args;
    std::optional<OpCost> cost;  // nullopt: needs the kernels' type
  };
  std::map<std::array<StringId, 4>, std::int32_t> cost_index;
  std::vector<Costed> costs;
  std::vector<Candidate> ops;
  ops.reserve(o.size());
  for (RowIndex i = 0; i < o.size(); ++i) {
    Candidate c{o.global_tid[i], o.start_ns[i], o.end_ns[i], o.external_id[i], trace.strings.get(o.name[i]), -1};
    if (shapes::has_formula(c.name)) {
      const std::array<StringId, 4> key{o.name[i], o.input_dims[i], o.input_types[i], o.concrete_inputs[i]};
      auto [it, inserted] = cost_index.emplace(key, -1);
      if (inserted) {
        OpArgs args;
        args.op = c.name;
        auto dims = shapes::parse_arg_shapes(trace.strings.get(o.input_dims[i]));
        auto types = shapes::parse_string_list(trace.strings.get(o.input_types[i]));
        auto values = o.concrete_inputs[i] == kNoString ? std::optional(std::vector<std::string>{})
                                                        : shapes::parse_string_list(trace.strings.get(o.concrete_inputs[i]));
        if (dims && types && values) {
          args.shapes = std::move(*dims);
          args.types = std::move(*types);
          args.concrete = std::move(*values);
          auto cost = shapes::op_cost(args);
          OpArgs probe = args;
          probe.assumed_type = ElementType{Precision::kBf16, 2};
          if (cost || shapes::op_cost(probe)) {
            it->second = static_cast<std::int32_t>(costs.size());
            costs.push_back({std::move(args), std::move(cost)});
          }
        }
      }
      c.cost = it->second;
    }
    ops.push_back(c);
  }
  const Join join = join_kernels(trace, ops);
  offer_to_kernels(
      trace, ops, join, kSourceKinetoShapes,
      [&](const Candidate& op, const std::vector<RowIndex>& kernels) -> std::optional<OpCost> {
        const Costed& costed = costs[static_cast<std::size_t>(op.cost)];
        if (costed.cost) return costed.cost;
        for (RowIndex r : kernels) {
          if (auto hint = type_hint(kernel_name(trace, r))) {
            OpArgs args = costed.args;
            args.assumed_type = hint;
            auto cost = shapes::op_cost(args);
            if (cost) cost->detail += " (element type from the kernel name)";
            return cost;
          }
        }
        return std::nullopt;
      },
      table);
  return {};
}

Result<void> fill_nvtx_shape_work(const WorkRequest& request, WorkTable& table) {
  const Trace& trace = request.trace;
  const auto& n = trace.nvtx;
  if (n.size() == 0 || trace.kernels.size() == 0) return {};
  // emit_nvtx's text: "NAME[, seq = N][, op_id = N], sizes = [[...], ...][, input_op_ids = ...]".
  struct Parsed {
    std::string_view name;
    std::vector<shapes::ArgShape> shapes;
  };
  std::unordered_map<StringId, std::int32_t> parsed_index;
  std::vector<Parsed> parsed;
  std::vector<Candidate> ops;
  // A 16-bit type stands in until the kernels are known (only to test that a formula fits).
  const ElementType probe{Precision::kBf16, 2};
  for (RowIndex i = 0; i < n.size(); ++i) {
    if (!is_nvtx_range(n.event_type[i]) || n.end_ns[i] == kNoTime || n.end_global_tid[i] != 0) continue;
    auto [it, inserted] = parsed_index.emplace(n.text[i], -1);
    if (inserted) {
      const std::string_view text = trace.strings.get(n.text[i]);
      const std::size_t sizes = text.find(", sizes = [");
      const std::size_t comma = text.find(", ");
      if (sizes != std::string_view::npos && comma != std::string_view::npos) {
        std::string_view list = text.substr(sizes + 10);
        const std::size_t more = list.find(", input_op_ids = ");
        if (more != std::string_view::npos) list = list.substr(0, more);
        auto dims = shapes::parse_arg_shapes(list);
        const std::string_view name = text.substr(0, comma);
        if (dims && shapes::has_formula(name)) {
          OpArgs args;
          args.op = name;
          args.shapes = *dims;
          args.assumed_type = probe;
          if (shapes::op_cost(args)) {
            it->second = static_cast<std::int32_t>(parsed.size());
            parsed.push_back({name, std::move(*dims)});
          }
        }
      }
    }
    if (it->second < 0) continue;
    ops.push_back({n.global_tid[i], n.start_ns[i], n.end_ns[i], 0, parsed[static_cast<std::size_t>(it->second)].name, it->second});
  }
  if (ops.empty()) return {};
  const Join join = join_kernels(trace, ops);
  std::int64_t assumed = 0;
  offer_to_kernels(
      trace, ops, join, kSourceNvtxShapes,
      [&](const Candidate& op, const std::vector<RowIndex>& kernels) {
        std::optional<ElementType> hint;
        for (RowIndex r : kernels) {
          if ((hint = type_hint(kernel_name(trace, r)))) break;
        }
        OpArgs args;
        args.op = op.name;
        args.shapes = parsed[static_cast<std::size_t>(op.cost)].shapes;
        args.assumed_type = hint ? *hint : probe;
        auto cost = shapes::op_cost(args);
        if (cost && !hint) {
          cost->detail += " (16-bit assumed: emit_nvtx records no types and the kernel name names none)";
          ++assumed;
        }
        return cost;
      },
      table);
  if (assumed > 0) {
    table.note({"element_type_assumed", NoteSeverity::kInfo,
                fmt::format("nvtx-shapes: {} operators' element type assumed 16-bit (bf16/fp16 peaks): their kernel names name no type",
                            assumed),
                assumed});
  }
  return {};
}

}  // namespace kernscope
