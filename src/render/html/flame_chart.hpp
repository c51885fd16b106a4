// A flame graph of one group of steps' sampled host stacks (kernscope host's collapsed stacks,
// drawn): the group's root frame at the bottom, each frame above its caller, children in name order,
// widths in samples. Frames are named as `kernscope host --format collapsed` names them
// (host_render.hpp); every frame's rect carries its name in data-name and a tooltip with its samples,
// its share of the group and the host time per step it stands for.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyses/steps/host_profile.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::html {

struct FlameChart {
  std::string svg;                    // empty when the group has no samples
  std::size_t frames = 0;             // frames drawn, the root included
  std::int64_t min_samples = 0;       // frames with fewer samples are too narrow to draw (1 px)
  bool deeper_left_out = false;       // stacks deeper than the chart's rows were cut
};

FlameChart host_flame_chart(const std::string& id, std::string_view description, const Trace& trace, const HostGroup& group);

}  // namespace kernscope::html
