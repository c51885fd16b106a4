// Report's next actions, from the account and priced by the replay. The candidates are the parts
// of the steady steps' account (step_accounting.hpp: the last group of each phase; the parts are
// exclusive slices of the steps' wall time, so no two actions claim the same instant) that hold at
// least the threshold: each GPU class, exposed communication, copies, the host's waits, its
// launches, its framework work, its runtime calls, and the idle time nothing records. Each becomes
// one action on that part, with the what-if change that stands for its fix where one does, replayed
// over the headline group's steps (diagnosis_whatif.hpp). Changes the replay shows to shorten the
// steps by 10 % or more are actions too when their part is small (a per-step synchronization
// serialising host work with the GPU).
//
// Ranking: by the saving expected over the steady steps, from the best estimate there is (the
// estimation ladder of ../shared/reference/peers-2026-12-06.md, B.2.4):
//   replayed     the replay of the fix itself: its saving
//   upper bound  a replay that removes the part outright (host=0, a class at its roof): half of it,
//                since a real fix rarely removes all of it (the data-loader fix of the ResNet
//                traces saved 35 of the 65 ms the loader held)
//   heuristic    no model of the fix (kernels whose work is unknown): 30 % of the part's time, as
//                TraceLens ranks its unmodelled operations; shown with predicted = null and why
// A replay that predicts less than the threshold drops its action (the fix would not pay here);
// one that predicts the steps slower is not trusted and the action is ranked as heuristic.
#pragma once

#include <cstdint>
#include <vector>

#include "analyses/diagnosis/diagnosis.hpp"
#include "analyses/trace_context.hpp"
#include "analyses/work/roofline.hpp"

namespace kernscope {

struct AdviceInputs {
  const TraceContext* context = nullptr;
  const StepAnalysis* steps = nullptr;
  const StepAccounting* accounting = nullptr;
  const std::vector<Finding>* findings = nullptr;  // rules' findings: evidence of the action on their part
  const RooflineResult* roofline = nullptr;        // by class, where kernel work is known (may be null)
  const MoeAnalysis* moe = nullptr;                // may be null
};

// The actions, most valuable first. Empty without steps or an account.
std::vector<ReportAction> advise(const AdviceInputs& in);

// The account part a rule's finding speaks of (a prefix of the part names: "blocked", "copy",
// "host.launch", ...), or empty.
std::string part_of_rule(const std::string& rule);

}  // namespace kernscope
