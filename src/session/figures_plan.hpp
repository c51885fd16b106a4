// The load plan of the runners that measure whole runs side by side (diff, compare): the event
// kinds measure_run reads, with the details of copies, memsets and NVTX.
#pragma once

#include "analyses/diff/diff_figures.hpp"
#include "kernscope/open.hpp"

namespace kernscope::session {

inline OpenOptions figures_plan() {
  OpenOptions open;
  open.kinds = figures_event_kinds();
  open.detail_kinds = bit(EventKind::kMemcpy) | bit(EventKind::kMemset) | bit(EventKind::kNvtx);
  return open;
}

}  // namespace kernscope::session
