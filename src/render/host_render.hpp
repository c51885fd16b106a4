// `kernscope host`: the summary under its tables, and the sampled stacks for flame-graph tools:
// collapsed stacks (one line per distinct stack, root first, frames joined by ';', then the count:
// what flamegraph.pl, inferno and speedscope import) and speedscope's own JSON (one sampled
// profile per group of steps, weights in nanoseconds of host time).
#pragma once

#include <string>
#include <vector>

#include "analyses/steps/host_profile.hpp"
#include "kernscope/render.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

std::string render_host_summary(const HostProfile& profile);
// `kernscope host --format json`: {"<each table's report>": rows, "findings", "notes"}.
std::string render_host_json(const std::vector<Table>& tables, const HostProfile& profile, const RenderOptions& options);
// Its tables, then the summary.
std::string render_host_text(const std::vector<Table>& tables, const HostProfile& profile, const RenderOptions& options);
// What the stacks name a group's root frame ("decode_step [decode]") and a frame of trace.host.stacks
// ("forward (modeling_llama.py)", with ';' and line breaks made ',': collapsed stacks' separators),
// so every output of the stacks (collapsed, speedscope, the HTML flame graph) names frames alike.
std::string host_group_root(const HostGroup& group);
std::string host_frame_name(const Trace& trace, std::uint32_t frame);
// One stack of trace.host.stacks as the outputs name it, root first. Frames whose symbol could not be
// resolved (a stripped library: an address each) are grouped by module: a run of them in one module
// is one frame, "[unresolved] (libcuda.so.1)", so a flame graph shows where the time is rather than
// a comb of addresses.
std::vector<std::string> host_stack_names(const Trace& trace, std::uint32_t stack);
// Each group's samples under a root frame naming the group ("decode_step [decode]").
std::string render_collapsed_stacks(const Trace& trace, const HostProfile& profile);
std::string render_speedscope(const Trace& trace, const HostProfile& profile);

}  // namespace kernscope
