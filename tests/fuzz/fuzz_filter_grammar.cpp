// libFuzzer target: the time grammar, the report-name grammar and the NVTX filter grammar.
#include <cstdint>
#include <string>

#include "kernscope/reports.hpp"
#include "kernscope/time_units.hpp"
#include "model/trace_filter.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)parse_duration(text);
  (void)parse_report(text);
  (void)parse_time_unit(text);
  if (auto window = parse_time_window(text); window && window->start && window->end && *window->start > *window->end) {
    __builtin_trap();  // the grammar promises start <= end
  }
  // The NVTX grammar against a small trace with a domain and nested ranges.
  static Trace trace = [] {
    Trace t;
    t.present = t.loaded = kAllEventKinds;
    auto add = [&](std::int32_t type, const char* text, TimeNs s, TimeNs e, std::int64_t domain) {
      auto& n = t.nvtx;
      n.start_ns.push_back(s); n.end_ns.push_back(e); n.global_tid.push_back((1 << 24) | 2);
      n.end_global_tid.push_back(0); n.event_type.push_back(type); n.domain_id.push_back(domain);
      n.text.push_back(t.strings.intern(text)); n.category.push_back(0); n.color.push_back(0);
      n.payload_kind.push_back(PayloadKind::kNone); n.payload_int.push_back(0); n.payload_double.push_back(0);
    };
    add(kNvtxDomainCreate, "dom", 0, kNoTime, 1);
    add(kNvtxPushPopRange, "step", 10, 20, 1);
    add(kNvtxPushPopRange, "a/b", 12, 15, 0);
    add(kNvtxStartEndRange, "open", 30, kNoTime, 0);
    return t;
  }();
  FilterSpec spec;
  spec.nvtx = text;
  if (auto filter = resolve_filter(trace, spec)) {
    Trace copy;
    copy.present = copy.loaded = kAllEventKinds;
    copy.nvtx = trace.nvtx;
    apply_filter(copy, *filter);
  }
  return 0;
}
