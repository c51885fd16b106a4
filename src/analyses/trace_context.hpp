// What several analyses of one run derive from the same trace, built once and shared (report runs
// ops, steps, the tails and the rules concurrently; ops, steps, their step windows and the API tail
// each built the lookup, ops and steps each matched the names): the launching-call lookup
// (api_lookup.hpp) and each kernel name's operation class. A part is built the first time an
// analysis asks for it — once, even when analyses on several threads ask at the same moment — and
// only read afterwards. Analyses called without a context build a private one.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "analyses/nsys/api_lookup.hpp"
#include "kernscope/op_classes.hpp"
#include "analyses/steps/step_windows.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

class TraceContext {
 public:
  // Both are borrowed: they must outlive the context.
  TraceContext(const Trace& trace, const OpRuleSet& rules) : trace_(trace), rules_(rules) {}

  const Trace& trace() const { return trace_; }
  const OpRuleSet& rules() const { return rules_; }

  const report::ApiLookup& api_lookup() const;
  // The API row that launched kernel `kernel` (api_lookup().find of its process and correlation
  // id), looked up once for every kernel of the trace: the step windows, the steps' attribution,
  // the set-up split, the phase of operations and the account each asked for every kernel's launch.
  std::optional<RowIndex> kernel_launch(RowIndex kernel) const {
    const RowIndex r = kernel_launches()[kernel];
    return r == kNoLaunch ? std::nullopt : std::optional<RowIndex>(r);
  }
  // The launching call of row `i` of a GPU table (kernels from the cache above, the others looked up).
  template <class Columns>
  std::optional<RowIndex> launch_of(const Columns& ops, RowIndex i) const {
    if constexpr (std::is_same_v<Columns, KernelColumns>) return kernel_launch(i);
    else return api_lookup().find(ops.global_pid[i], ops.correlation_id[i]);
  }

  // A kernel name's class under the rules ("other" with a null rule when none matched).
  struct NameClass {
    std::string op_class;
    const OpRule* rule = nullptr;
  };
  // The class of a kernel's demangled name (a StringId of trace().kernels.demangled_name, or
  // kNoString): every distinct name is matched once.
  const NameClass& kernel_class(StringId demangled_name) const {
    const auto& c = classes();
    return c.classes[c.slot_class[demangled_name == kNoString ? c.slot_class.size() - 1 : demangled_name]];
  }
  // The same class as a small dense number, an index of class_names(): for analyses that add up
  // time per class over millions of kernels (an array slot, not a string key).
  std::uint32_t kernel_class_id(StringId demangled_name) const {
    const auto& c = classes();
    return c.class_id[c.slot_class[demangled_name == kNoString ? c.slot_class.size() - 1 : demangled_name]];
  }
  // The distinct classes of the trace's kernel names, in order of first appearance.
  const std::vector<std::string>& class_names() const { return classes().class_names; }

  // Launch calls (of any kind; a backtraced call's repeated row once) per thread: the thread that
  // launches most is the host profile's. Counted once over every call, in chunks on several threads.
  const std::map<std::int64_t, std::int64_t>& launch_calls_per_thread() const;

  // Builds now what report's longest chain of analyses asks for (the lookup, every kernel's launch;
  // the launch calls per thread where the trace has host samples, which the LLM rules' host profile
  // reads), so that a job started for it at report's beginning has them ready by the time the step
  // windows and that profile ask, instead of building them on that chain.
  void build_launch_facts() const;

  // Where the steps are (step_windows.hpp), found once per step options: `steps`, the set-up split
  // and the host profile of one report ask for the same windows.
  const Result<report::StepWindows>& step_windows(const StepOptions& options) const;

 private:
  struct Classes {
    std::vector<std::uint32_t> slot_class;  // by StringId, the last slot for kNoString
    std::vector<NameClass> classes;         // one per distinct kernel name
    std::vector<std::uint32_t> class_id;    // per entry of `classes`: its index in class_names
    std::vector<std::string> class_names;   // distinct op_class values
  };
  // Built once (std::call_once); read millions of times (a class per kernel per analysis), so a
  // flag set after the build answers without call_once's own cost (a tenth of the account's).
  const Classes& classes() const { return classes_ready_.load(std::memory_order_acquire) ? classes_ : build_classes(); }
  const Classes& build_classes() const;
  static constexpr RowIndex kNoLaunch = UINT32_MAX;
  // Per kernel row (4 bytes a kernel).
  const std::vector<RowIndex>& kernel_launches() const {
    return launches_ready_.load(std::memory_order_acquire) ? kernel_launches_ : build_kernel_launches();
  }
  const std::vector<RowIndex>& build_kernel_launches() const;

  const Trace& trace_;
  const OpRuleSet& rules_;
  mutable std::once_flag lookup_once_, classes_once_, launches_once_, per_thread_once_;
  mutable std::atomic<bool> classes_ready_{false}, launches_ready_{false};
  mutable std::vector<RowIndex> kernel_launches_;
  mutable std::map<std::int64_t, std::int64_t> launch_calls_per_thread_;
  mutable std::unique_ptr<report::ApiLookup> lookup_;
  mutable Classes classes_;
  mutable std::mutex windows_mutex_;
  mutable std::vector<std::pair<std::optional<std::string>, std::unique_ptr<Result<report::StepWindows>>>> windows_;
};

// The analyses that take a context declare that entry point in their own header beside the one
// taking a trace (which builds a private context): ops.hpp, steps/analyze_steps.hpp, tail.hpp,
// steps/host_profile.hpp, steps/step_accounting.hpp, whatif/whatif.hpp, nsys/analyze.hpp (LLM rules).

}  // namespace kernscope
