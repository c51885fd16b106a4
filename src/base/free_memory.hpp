// Gives the allocator's free memory back to the system before a command's last peak. glibc keeps
// what the analyses freed in its arenas (one per thread that allocated: report's analyses run on a
// dozen), 30-35 MiB of the 300 MB exports' resident set that the what-if replays' graphs then stack
// on; malloc_trim returns the free pages of every arena (a few ms). Elsewhere a no-op.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kernscope {

inline void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace kernscope
