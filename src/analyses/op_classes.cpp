// Operation classes (kernscope ops). Rules are compiled once; each distinct kernel name is matched
// once. Ambiguous attention kernels (cuDNN SDPA, FlashAttention's flash_fwd) are told apart per
// instance by the NVTX ranges enclosing their launch: a range named *prefill* or *decode*.
#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "analyses/ops.hpp"
#include "analyses/nsys/api_lookup.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/nsys/nvtx_ranges.hpp"
#include "analyses/steps/step_windows.hpp"
#include "analyses/nsys/report_helpers.hpp"
#include "base/pattern_table.hpp"
#include "analyses/steps/setup_split.hpp"
#include "base/text_util.hpp"
#include "base/text_pattern.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/phase.hpp"

extern const char* const kernscope_builtin_op_rules;  // data/op_rules.tsv, generated at build time

namespace kernscope {
namespace {

// Phase of each kernel from the step annotation around its launching API call: the ranges that
// name a step and its phase as `steps` reads them (step_windows.hpp: decode_step, prefill, vLLM's
// context/generation counts, SGLang's step[EXTEND ..]), never an operator whose name merely
// contains "prefill" or "decode" (aiter::mha_batch_prefill, a video decoder's decode_frame).
std::vector<Phase> kernel_phases(const TraceContext& context, bool& found_any) {
  const Trace& trace = context.trace();
  std::vector<Phase> phases(trace.kernels.size(), Phase::kUnknown);
  found_any = false;
  if (!(trace.loaded & bit(EventKind::kNvtx)) || !(trace.loaded & bit(EventKind::kApiCalls))) return phases;
  const auto ranges = report::index_ranges(trace);
  std::vector<Phase> range_phase(ranges.size(), Phase::kUnknown);
  bool any_named = false;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    if (is_kineto_op_domain(trace.nvtx.domain_id[ranges[r].row])) continue;
    const auto colon = ranges[r].name.find(':');
    const auto annotation = report::step_annotation(
        colon == std::string::npos ? std::string_view(ranges[r].name) : std::string_view(ranges[r].name).substr(colon + 1));
    if (annotation) range_phase[r] = annotation->phase == Phase::kMixed ? Phase::kUnknown : annotation->phase;
    any_named |= range_phase[r] != Phase::kUnknown;
  }
  if (!any_named) return phases;
  const auto& k = trace.kernels;
  const auto& a = trace.api_calls;
  // The kernels' launching calls are looked up in slices: a query's enclosing ranges do not depend
  // on the other queries, and one slice holds 1.5 MB where all of them held 170 MB (1 GB export).
  constexpr std::size_t kSlice = std::size_t{1} << 16;
  std::vector<report::Interval> queries;
  std::vector<RowIndex> kernel_of_query;
  queries.reserve(std::min<std::size_t>(kSlice, k.size()));
  kernel_of_query.reserve(queries.capacity());
  auto flush = [&] {
    report::find_enclosing(ranges, queries, [&](std::size_t q, std::size_t r) {
      if (range_phase[r] == Phase::kUnknown) return;
      phases[kernel_of_query[q]] = range_phase[r];
      found_any = true;
    });
    queries.clear();
    kernel_of_query.clear();
  };
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (auto r = context.kernel_launch(i)) {
      queries.push_back({a.global_tid[*r], a.start_ns[*r], a.end_ns[*r]});
      kernel_of_query.push_back(i);
      if (queries.size() == kSlice) flush();
    }
  }
  flush();
  return phases;
}

}  // namespace

const std::vector<std::string>& operation_classes() {
  // Grouped by what a reader compares: matrix products, attention, the layer's other operations,
  // routing/sampling/communication, data movement and generic kernels, training-only kernels,
  // memory operations, then the remainder.
  static const std::vector<std::string> classes = {
      "gemm", "gemv", "quantized_gemm", "moe_gemm", "convolution",
      "attention_prefill", "attention_decode", "attention", "splitkv_reduce", "kv_cache_write",
      "norm", "softmax", "rope", "activation", "pooling", "embedding", "quantization",
      "moe_routing", "sampling", "communication",
      "copy_cast", "elementwise", "reduction",
      "backward", "optimizer",
      "memcpy", "memset", "other"};
  return classes;
}

Result<OpRuleSet> OpRuleSet::parse(const std::string& text, const std::string& source) {
  OpRuleSet set;
  auto rows = read_pattern_rows(text, source, "CLASS");
  if (!rows) return std::unexpected(rows.error());
  const auto& known = operation_classes();
  for (auto& row : *rows) {
    OpRule rule;
    rule.op_class = std::move(row.name);
    rule.pattern = std::move(row.pattern);
    rule.origin = row.where;
    if (std::find(known.begin(), known.end(), rule.op_class) == known.end() || rule.op_class == "memcpy" ||
        rule.op_class == "memset") {
      return make_error(ErrorCode::kInvalidArgument, row.where + ": unknown operation class '" + rule.op_class + "'");
    }
    if (rule.pattern.empty()) return make_error(ErrorCode::kInvalidArgument, row.where + ": empty pattern");
    auto matcher = TextPattern::compile(rule.pattern, {.ignore_case = true});
    if (!matcher) return make_error(ErrorCode::kInvalidArgument, row.where + ": invalid regular expression: " + matcher.error());
    rule.matcher = std::make_shared<const TextPattern>(std::move(*matcher));
    set.rules_.push_back(std::move(rule));
  }
  return set;
}

const OpRuleSet& OpRuleSet::builtin() {
  static const OpRuleSet rules = [] {
    auto parsed = parse(kernscope_builtin_op_rules, "data/op_rules.tsv");
    return parsed ? std::move(*parsed) : OpRuleSet{};  // the built-in file is tested to parse
  }();
  return rules;
}

OpRuleSet OpRuleSet::combine(const OpRuleSet& first, const OpRuleSet& second) {
  OpRuleSet set = first;
  set.rules_.insert(set.rules_.end(), second.rules_.begin(), second.rules_.end());
  return set;
}

std::pair<std::string, const OpRule*> OpRuleSet::classify(std::string_view kernel_name) const {
  for (const auto& rule : rules_) {
    if (rule.matcher->search(kernel_name)) return {rule.op_class, &rule};
  }
  return {"other", nullptr};
}

std::optional<NcclKernel> parse_nccl_kernel(std::string_view name) {
  std::string_view rest;
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (name.starts_with(prefix)) rest = name.substr(prefix.size());
  }
  if (rest.empty()) return std::nullopt;
  rest = rest.substr(0, rest.find('('));
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= rest.size()) {
    const auto next = rest.find('_', pos);
    parts.emplace_back(rest.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  NcclKernel k;
  k.operation = parts[0];
  static const std::vector<std::string> algorithms = {"RING", "TREE", "NVLS", "COLLNET", "PAT"};
  static const std::vector<std::string> protocols = {"LL", "LL128", "SIMPLE"};
  static const std::vector<std::string> reductions = {"Sum", "Prod", "Max", "Min", "PreMulSum", "SumPostDiv"};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (std::find(protocols.begin(), protocols.end(), p) != protocols.end()) {
      k.protocol = p;
    } else if (std::any_of(algorithms.begin(), algorithms.end(), [&](const std::string& a) { return p == a; })) {
      k.algorithm = k.algorithm.empty() ? p : k.algorithm + "_" + p;
    } else if ((p == "TREE" || p == "DIRECT" || p == "CHAIN") && !k.algorithm.empty()) {
      k.algorithm += "_" + p;
    } else if (std::find(reductions.begin(), reductions.end(), p) != reductions.end()) {
      k.reduction = p;
    } else if (k.dtype.empty() && !std::all_of(p.begin(), p.end(), [](unsigned char c) { return std::isdigit(c); })) {
      k.dtype = p;  // a number is a kernel variant (RCCL's ncclDevKernel_Generic_1), not a type
      if ((p == "int8" || p == "uint8" || p == "int32" || p == "uint32" || p == "int64" || p == "uint64") &&
          i + 1 < parts.size() && parts[i + 1] == "t") {
        ++i;  // older names spell C types: int8_t
      }
    }
  }
  return k;
}

Result<OpsResult> classify_operations(const Trace& trace, const OpRuleSet& rules) {
  const TraceContext context(trace, rules);
  return classify_operations(context);
}

Result<OpsResult> classify_operations(const TraceContext& context) {
  const Trace& trace = context.trace();
  if (!trace.has(EventKind::kKernels) && !trace.has(EventKind::kMemcpy) && !trace.has(EventKind::kMemset) &&
      trace.graph_execs.size() == 0) {
    return std::unexpected(report::no_data(trace, "GPU kernel, memory operation or CUDA graph execution data"));
  }
  OpsResult result;
  bool phases_found = false;
  const auto phases = kernel_phases(context, phases_found);
  result.phase_source = phases_found ? "step annotations that state the phase (prefill, decode_step, vLLM's and SGLang's step names)"
                                     : "none (no step annotation states prefill or decode)";
  // GPU work launched before the first step (loading the model, warm-up) is not what the steps cost.
  const auto setup = report::split_setup(context);
  result.setup_note = setup.note;
  result.setup_kernels = setup.kernels;
  result.setup_copies = setup.copies;

  // Per distinct name: its rule class, and instances/time by resolved phase (for "attention").
  struct NameInfo {
    std::string op_class;
    std::string rule;
    bool attention = false;  // op_class is "attention": split by phase where the kernel's is known
    std::int64_t instances[3] = {0, 0, 0};  // unresolved, prefill, decode
    std::int64_t ns[3] = {0, 0, 0};
  };
  // By StringId, with one extra slot after the pool's ids for kernels without a name.
  std::vector<NameInfo*> info_of(trace.strings.size() + 1, nullptr);
  std::deque<NameInfo> infos;
  std::vector<StringId> ids;
  const auto& k = trace.kernels;
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (setup.kernel[i]) continue;
    const StringId id = k.demangled_name[i];
    const std::size_t slot = id == kNoString ? trace.strings.size() : id;
    NameInfo*& info = info_of[slot];
    if (!info) {
      const auto& [op_class, rule] = context.kernel_class(id);
      info = &infos.emplace_back(NameInfo{op_class, rule ? rule->origin : "", op_class == "attention", {0, 0, 0}, {0, 0, 0}});
      ids.push_back(id);
    }
    const int p = info->attention && phases[i] != Phase::kUnknown ? (phases[i] == Phase::kPrefill ? 1 : 2) : 0;
    ++info->instances[p];
    info->ns[p] += k.end_ns[i] - k.start_ns[i];
  }
  std::map<std::string, OpClassTotal> totals;
  std::map<std::string, std::set<StringId>> names_per_class;
  for (std::size_t n = 0; n < infos.size(); ++n) {
    const auto& info = infos[n];
    for (int p = 0; p < 3; ++p) {
      if (info.instances[p] == 0) continue;
      const std::string c = p == 0 ? info.op_class : p == 1 ? "attention_prefill" : "attention_decode";
      auto& t = totals[c];
      t.op_class = c;
      t.total_ns += info.ns[p];
      t.instances += info.instances[p];
      names_per_class[c].insert(ids[n]);
    }
  }
  auto add_memops = [&](const std::string& op_class, const auto& columns, const std::vector<bool>& in_setup) {
    if (std::count(in_setup.begin(), in_setup.end(), false) == 0) return;
    auto& t = totals[op_class];
    t.op_class = op_class;
    for (RowIndex i = 0; i < columns.size(); ++i) {
      if (in_setup[i]) continue;
      t.total_ns += columns.end_ns[i] - columns.start_ns[i];
      ++t.instances;
    }
  };
  add_memops("memcpy", trace.memcpys, setup.memcpy);
  add_memops("memset", trace.memsets, setup.memset);
  if (totals.contains("memcpy")) {
    std::set<std::int32_t> kinds;
    for (RowIndex i = 0; i < trace.memcpys.size(); ++i) {
      if (!setup.memcpy[i]) kinds.insert(trace.memcpys.copy_kind[i]);
    }
    totals["memcpy"].kernels = static_cast<std::int64_t>(kinds.size());
  }
  if (totals.contains("memset")) totals["memset"].kernels = 1;
  // Graphs traced as whole graphs (nsys's default --cuda-graph-trace=graph): their GPU time is known,
  // their kernels are not: one class, as the account names it, its "kernels" the distinct graphs.
  if (const auto& g = trace.graph_execs; g.size() > 0) {
    auto& t = totals[kWholeGraphClass];
    t.op_class = kWholeGraphClass;
    std::set<std::int64_t> graphs;
    for (RowIndex i = 0; i < g.size(); ++i) {
      t.total_ns += g.end_ns[i] - g.start_ns[i];
      ++t.instances;
      graphs.insert(g.graph_id[i]);
    }
    t.kernels = static_cast<std::int64_t>(graphs.size());
  }
  for (auto& [c, names] : names_per_class) totals[c].kernels = static_cast<std::int64_t>(names.size());

  for (auto& [c, t] : totals) {
    result.total_ns += t.total_ns;
    result.classes.push_back(t);
  }
  std::stable_sort(result.classes.begin(), result.classes.end(),
                   [](const OpClassTotal& a, const OpClassTotal& b) { return a.total_ns > b.total_ns; });
  if (result.total_ns > 0 && totals.contains("other")) {
    result.other_share = static_cast<double>(totals["other"].total_ns) / static_cast<double>(result.total_ns);
  }
  for (std::size_t n = 0; n < infos.size(); ++n) {
    const auto& info = infos[n];
    KernelClassification kc;
    kc.name = std::string(trace.strings.get(ids[n]));
    std::vector<std::pair<std::string, std::int64_t>> resolved;
    for (int p = 0; p < 3; ++p) {
      if (info.instances[p]) resolved.push_back({p == 0 ? info.op_class : p == 1 ? "attention_prefill" : "attention_decode", info.instances[p]});
    }
    kc.op_class = resolved.size() == 1 ? resolved[0].first : info.op_class;
    if (resolved.size() > 1) {
      for (std::size_t r = 0; r < resolved.size(); ++r) kc.op_class += (r == 0 ? " (" : ", ") + resolved[r].first + " " + std::to_string(resolved[r].second);
      kc.op_class += ")";
    }
    kc.rule = info.rule;
    kc.instances = info.instances[0] + info.instances[1] + info.instances[2];
    kc.total_ns = info.ns[0] + info.ns[1] + info.ns[2];
    if (info.op_class == "communication") kc.nccl = parse_nccl_kernel(kc.name);
    result.kernels.push_back(std::move(kc));
  }
  std::sort(result.kernels.begin(), result.kernels.end(), [](const KernelClassification& a, const KernelClassification& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return result;
}

Table ops_table(const OpsResult& result) {
  Table t;
  t.report = "ops";
  t.title = "GPU Time by Operation Class";
  t.columns = {{"Class"}, {"Time", Unit::kPercent}, {"Total Time", Unit::kDuration}, {"Instances"}, {"Kernels"}};
  for (const auto& c : result.classes) {
    t.rows.push_back({c.op_class, report::percent_of(c.total_ns, result.total_ns), c.total_ns, c.instances, c.kernels});
  }
  return t;
}

Table ops_detail_table(const OpsResult& result) {
  Table t;
  t.report = "ops_detail";
  t.title = "Kernel Classification";
  t.columns = {{"Class"}, {"Time", Unit::kPercent}, {"Total Time", Unit::kDuration}, {"Instances"},
               {"Rule"}, {"NCCL"}, {"Name"}};
  for (const auto& k : result.kernels) {
    std::string nccl;
    if (k.nccl) nccl = k.nccl->operation + " " + k.nccl->reduction + " " + k.nccl->dtype + " " + k.nccl->algorithm + " " + k.nccl->protocol;
    t.rows.push_back({k.op_class, report::percent_of(k.total_ns, result.total_ns), k.total_ns, k.instances, k.rule,
                      nccl, k.name});
  }
  return t;
}

}  // namespace kernscope
