// Streams a Kineto trace with the reader's splitter and parses, with simdjson's DOM, only the
// events that can carry collective arguments (a cheap text search decides), so the pass costs
// about one read of the file.
#include "ranks/collectives_kineto_args.hpp"

#include <simdjson.h>

#include <algorithm>
#include <optional>

#include "readers/kineto/byte_source.hpp"
#include "readers/kineto/decimal_time.hpp"
#include "readers/kineto/json_repair.hpp"
#include "readers/kineto/json_splitter.hpp"

namespace kernscope::ranks {
namespace {

namespace dom = simdjson::dom;

std::string text_of(dom::element v) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  // Numbers (a process group named 0) and arrays ("[0, 1]" written as a list) as JSON text.
  return simdjson::minify(v);
}

std::int64_t integer_of(dom::element v, std::int64_t fallback) {
  std::int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS) return static_cast<std::int64_t>(d);
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    try {
      return std::stoll(std::string(s));
    } catch (...) {
    }
  }
  return fallback;
}

// The product of the first shape in "Input Dims" ([[8, 1024, 8816]]): old traces' only size.
std::int64_t elements_of_dims(dom::element dims) {
  dom::array outer;
  if (dims.get_array().get(outer) != simdjson::SUCCESS) return -1;
  for (dom::element shape : outer) {
    dom::array inner;
    if (shape.get_array().get(inner) != simdjson::SUCCESS) continue;
    std::int64_t product = 1;
    bool any = false;
    for (dom::element d : inner) {
      product *= std::max<std::int64_t>(0, integer_of(d, 0));
      any = true;
    }
    if (any) return product;
  }
  return -1;
}

struct Scanner {
  CommArgsLookup out;
  std::optional<std::int64_t> base_ns;
  dom::parser parser;

  Result<void> event(const kineto::Span& span) {
    const std::string_view text = span.text;
    const bool comms = text.find("record_param_comms") != std::string_view::npos ||
                       text.find("\"nccl:") != std::string_view::npos;
    const bool kernel_args = text.find("Collective name") != std::string_view::npos;
    if (!comms && !kernel_args) return {};
    std::string repaired;
    dom::element e;
    if (parser.parse(text.data(), text.size(), false).get(e) != simdjson::SUCCESS) {
      kineto::RepairCounts counts;
      repaired = kineto::repair_json(text, counts);
      if (parser.parse(repaired).get(e) != simdjson::SUCCESS) return {};  // the reader reports bad events
    }
    dom::object args;
    if (e["args"].get_object().get(args) != simdjson::SUCCESS) return {};
    CommArgs a;
    std::int64_t correlation = -1;
    for (auto [key, value] : args) {
      if (key == "Collective name") a.collective = text_of(value);
      else if (key == "Process Group Name") a.group = text_of(value);
      else if (key == "Process Group Ranks") a.group_ranks = text_of(value);
      else if (key == "Group size") a.group_size = integer_of(value, 0);
      else if (key == "In msg nelems") a.in_elements = integer_of(value, -1);
      else if (key == "Out msg nelems") a.out_elements = integer_of(value, -1);
      else if (key == "dtype") a.dtype = text_of(value);
      else if (key == "Seq") a.seq = integer_of(value, -1);
      else if (key == "correlation") correlation = integer_of(value, -1);
      else if (key == "Input Dims" && a.in_elements < 0) a.in_elements = elements_of_dims(value);
      else if (key == "Input type" && a.dtype.empty()) {
        dom::array types;
        if (value.get_array().get(types) == simdjson::SUCCESS) {
          for (dom::element t : types) {
            a.dtype = text_of(t);
            break;
          }
        }
      }
    }
    std::string_view name, cat;
    if (e["name"].get_string().get(name) != simdjson::SUCCESS) name = {};
    if (e["cat"].get_string().get(cat) != simdjson::SUCCESS) cat = {};
    if (a.collective.empty() && name.starts_with("nccl:")) a.collective = std::string(name);
    if (a.collective.empty() && a.in_elements < 0) return {};  // no arguments worth keeping
    if (cat == "gpu_user_annotation") return {};  // GPU-side copies of the annotations: not launch context
    if (cat == "kernel") {
      if (correlation >= 0 && !a.collective.empty()) out.by_correlation.emplace_back(static_cast<std::uint32_t>(correlation), std::move(a));
      return {};
    }
    auto time = [&](std::string_view key) -> std::optional<std::int64_t> {
      dom::element v;
      if (e[key].get(v) != simdjson::SUCCESS) return std::nullopt;
      std::string token = v.is_string() ? std::string(std::string_view(v.get_string().value_unsafe())) : simdjson::minify(v);
      return kineto::microseconds_text_to_ns(token);
    };
    auto ts = time("ts");
    auto dur = time("dur");
    if (!ts || !dur) return {};
    out.operations.push_back({*ts, *ts + *dur, std::move(a)});
    return {};
  }

  Result<void> member(std::string_view key, const kineto::Span& value) {
    if (key != "baseTimeNanoseconds") return {};
    dom::element e;
    if (parser.parse(value.text.data(), value.text.size(), false).get(e) != simdjson::SUCCESS) return {};
    std::int64_t base;
    if (e.get_int64().get(base) == simdjson::SUCCESS) base_ns = base;
    return {};
  }
};

}  // namespace

Result<CommArgsLookup> read_kineto_comm_args(const std::string& path) {
  auto source = kineto::open_byte_source(path);
  if (!source) return std::unexpected(source.error());
  Scanner scanner;
  kineto::JsonSplitter splitter;
  auto split = splitter.run(
      **source, [&](std::string_view key, const kineto::Span& v) { return scanner.member(key, v); },
      [&](const kineto::Span& s) { return scanner.event(s); });
  if (!split) return std::unexpected(split.error());
  CommArgsLookup out = std::move(scanner.out);
  if (scanner.base_ns) {
    for (auto& op : out.operations) {
      op.start_ns += *scanner.base_ns;
      op.end_ns += *scanner.base_ns;
    }
  }
  std::stable_sort(out.by_correlation.begin(), out.by_correlation.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Operations without a collective name add only sizes (nccl:* annotations of old traces).
  std::stable_sort(out.operations.begin(), out.operations.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace kernscope::ranks
