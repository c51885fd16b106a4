// Where each step's time goes: one accounting per step (kernscope account, report's first lines).
// A step's window runs from its start until its range or its last GPU work ends, whichever is
// later (GPU work that runs on into the next step of its process counts there: account_ends).
// The window is split instant by instant into exclusive categories, by what the step's process
// was doing at that instant (work on several streams or threads at once counts once):
//   gpu            a compute kernel ran (split by operation class; copies or collectives
//                  overlapped by compute count here)
//   communication  only collective / peer-to-peer kernels ran (exposed communication)
//   copy           only copies or memsets ran (exposed copies; pageable ones noted)
//   host           the GPU was idle while a host thread of the process worked: in a run of its
//                  CUDA calls that launch or prepare work, each within 100 us of the last (the
//                  calls and the framework's time between them: host.launch; a run that launches
//                  nothing, such as an allocation on its own: host.runtime), or in a framework
//                  range (host.framework: NVTX ranges inside the step, PyTorch's cpu_op and
//                  record_function ranges), named by the outermost range open (the data
//                  loader's __next__, not the aten::stack inside it), or busy on a CPU with none of
//                  these (host.unrecorded: Python or other code between calls, known from the
//                  thread CPU clocks kernscope's tracer reads; --sample cpu names the functions)
//   blocked        the GPU was idle while a host thread waited in a blocking call (device,
//                  stream, event or context synchronization, a synchronous copy, or any call that
//                  copied to or from pageable memory and returned only once its copy had ended:
//                  a wait by behaviour, whatever its name), by call
//   idle           nothing recorded explains the instant: idle.queued where launched work was
//                  waiting to start (its launch call had returned: the GPU ran something the trace
//                  does not hold, another process's work, or its clock is offset from the host's),
//                  else idle.unexplained
// Where the GPU is idle and several host states hold at once, the most specific one counts:
// blocked, then launch, then runtime, then framework. The categories of a step sum to its window
// exactly; groups, phases and the loop are sums over their steps.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernscope/op_classes.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

enum class TimeCategory : std::uint8_t { kGpu, kCommunication, kCopy, kHost, kBlocked, kIdle };
inline constexpr std::size_t kTimeCategories = 6;
inline constexpr std::array<TimeCategory, kTimeCategories> kAllTimeCategories = {
    TimeCategory::kGpu, TimeCategory::kCommunication, TimeCategory::kCopy,
    TimeCategory::kHost, TimeCategory::kBlocked,       TimeCategory::kIdle};
std::string_view category_name(TimeCategory category);  // "gpu", "communication", ...

// One window's time by category, and each category's parts.
struct TimeAccount {
  std::int64_t window_ns = 0;
  std::array<std::int64_t, kTimeCategories> ns{};
  // Parts as "category.part": gpu.<operation class>, copy.h2d|d2h|d2d|p2p|other|memset,
  // host.launch|runtime|framework|unrecorded, blocked.<call name>, communication.collectives,
  // idle.queued|unexplained. A category's parts sum to it.
  std::map<std::string, std::int64_t> parts;
  std::map<std::string, std::int64_t> framework;  // host.framework by outermost open range name
  std::map<std::string, std::int64_t> framework_inner;  // host.framework by innermost open range name
  std::int64_t pageable_copy_ns = 0;              // copy time during which a pageable copy ran

  std::int64_t at(TimeCategory c) const { return ns[static_cast<std::size_t>(c)]; }
  std::int64_t sum() const;
  void add(const TimeAccount& other);
  // The category with the most time (the first of equals in category order).
  TimeCategory bottleneck() const;
};

// Steps of one group (name and phase) or one phase, added up.
struct AccountGroup {
  std::string name;  // the group's name, or the phase's
  Phase phase = Phase::kUnknown;
  std::int64_t steps = 0;
  TimeAccount account;
};

struct StepAccounting {
  std::vector<TimeAccount> steps;     // one per StepAnalysis::steps, in its order
  std::vector<AccountGroup> groups;   // by group and phase, in order of first start
  // The leading process (the one whose steps' GPU time is largest, when steps belong to several):
  // its phases in order of first start, and its whole loop (setup before the first step is in no step).
  std::int64_t process = 0;  // process_key packing; 0: steps not split by process
  std::size_t processes = 0;  // how many processes have steps
  std::vector<AccountGroup> phases;
  TimeAccount loop;
  // The steady state the headlines read: the leading process's steps of the last group of each
  // phase (a warm-up group before a measured one is left out). The loop where every phase has one
  // group (steady_is_loop).
  TimeAccount steady;
  std::vector<std::string> steady_groups;
  // Per step of StepAnalysis::steps: whether it is one of those steady steps (the one definition the
  // report's tiles, charts and actions read).
  std::vector<bool> steady_step;
  bool steady_is_loop = true;
  std::vector<Note> notes;
};

// The accounting of `steps` (found in `trace` with `rules`); the overload below shares a run's
// context.
StepAccounting account_steps(const Trace& trace, const OpRuleSet& rules, const StepAnalysis& steps);
class TraceContext;
StepAccounting account_steps(const TraceContext& context, const StepAnalysis& steps);  // sharing the run's context

// What the account reads of a run whatever its steps (the GPU tables and calls indexed by start,
// each call name's kind, the calls that waited for their own pageable copy), built once: report
// builds it while the steps are still being found, and accounts them with it afterwards.
class AccountSources;
std::shared_ptr<const AccountSources> account_sources(const TraceContext& context);
StepAccounting account_steps(const AccountSources& sources, const StepAnalysis& steps);

// Where each step's accounted window ends: when its range or its GPU work ends, whichever is
// later, except that GPU work still running when the next step of its process starts counts in
// that step (an instant belongs to one step: the loop's sums are its wall-clock time, and a
// pipelined loop's steps are its period). The last step of a process runs until its GPU work ends.
std::vector<TimeNs> account_ends(const std::vector<Step>& steps);

}  // namespace kernscope
