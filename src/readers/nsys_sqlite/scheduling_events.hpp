// Thread CPU stretches from nsys's scheduling events (SCHED_EVENTS: --cpuctxsw=process-tree, nsys's
// default on Linux): a thread is busy from each switch in to the next switch out and idle from a
// switch out to the next switch in, exactly, where kernscope's tracer samples the threads' CPU clocks
// (KERNSCOPE_THREAD_CPU). Both fill Trace::thread_cpu, read by the accounting (host work no call
// records) and the step finder (a thread working between CUDA calls is not between requests).
#pragma once

#include <set>
#include <string>

#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"
#include "readers/nsys_sqlite/sqlite_db.hpp"

namespace kernscope::nsys {

// Fills trace.thread_cpu for the threads that made CUDA calls (trace.api_calls, read before), where
// the export has SCHED_EVENTS and trace.thread_cpu is still empty. A table of another shape is a note.
Result<void> read_scheduling_events(const Database& db, const std::set<std::string>& tables, Trace& trace);

}  // namespace kernscope::nsys
