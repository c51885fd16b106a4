// Names a thread kernscope starts inside another program (the tracer's "ks-..." threads), so that
// top, /proc/PID/task/*/comm, gdb and a profiler of that program tell them from the program's own,
// and what they cost can be measured apart (bench/gpu/live: a paused tracer's threads' CPU time).
#pragma once

#include <pthread.h>

namespace kernscope {

// At most 15 characters (the kernel's limit); a longer name is left unset.
inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace kernscope
