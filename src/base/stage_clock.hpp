// Where a command's wall time and memory go, stage by stage, for measuring kernscope itself:
// with KERNSCOPE_PHASE_TIMES set, each mark prints one line on standard error — seconds since the
// first mark, the stage that just ended, the thread's number, the resident set now and its peak so
// far — so a run on another machine (the GPU host's 16 cores) shows its chain of analyses and
// where its memory peaks without a special build. Without the variable a mark costs one load.
#pragma once

#include <string_view>

namespace kernscope {

// Whether marks print (KERNSCOPE_PHASE_TIMES set; read once).
bool stage_clock_on();
// Prints "kernscope: stage <s> <what> thread <n> rss <MiB> peak <MiB>" where the clock is on.
void stage_mark(std::string_view what);

}  // namespace kernscope
