// `kernscope host`: the summary under its tables, and the sampled stacks for flame-graph tools:
// collapsed stacks (one line per distinct stack, root first, frames joined by ';', then the count:
// what flamegraph.pl, inferno and speedscope import) and speedscope's own JSON (one sampled
// profile per group of steps, weights in nanoseconds of host time).
#pragma once

#include <string>

#include "kernscope/host_profile.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

std::string render_host_summary(const HostProfile& profile);
// Each group's samples under a root frame naming the group ("decode_step [decode]").
std::string render_collapsed_stacks(const Trace& trace, const HostProfile& profile);
std::string render_speedscope(const Trace& trace, const HostProfile& profile);

}  // namespace kernscope
