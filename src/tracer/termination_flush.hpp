// Writing the trace when the traced program is terminated by a signal. A program killed by SIGTERM
// (a pool worker ended by terminate(), a server stopped by its supervisor, `record` forwarding a
// Ctrl-C as SIGTERM) runs no exit handler, and records CUPTI still holds would be lost. Where the
// program left SIGTERM, SIGINT or SIGHUP at their default action (die), the tracer puts a handler in
// front: it wakes a thread prepared for this, which writes the trace, and then lets the signal do
// what it would have done. The program still dies by that signal, with the same status. The wait is
// bounded, so a flush that cannot finish (a lock held by the interrupted thread) delays the death
// by at most `bound`, never prevents it; what was committed before stays readable.
// Signals the program handles itself are left alone, including handlers it installs later. A child
// forked from the program gets the default actions back (it has no trace to write).
#pragma once

#include <signal.h>

#include <chrono>

namespace kernscope::tracer {

// Installs the handlers (once per process; later calls do nothing) and starts the waiting thread.
// `finish` runs at most once, on that thread. Returns how many of the three signals were taken.
int finish_on_termination(void (*finish)(), std::chrono::milliseconds bound);

// While alive, the calling thread blocks the three signals, and threads it starts inherit that: the
// tracer's own threads must never run the handler (the collector would wait for itself).
class TerminationSignalsBlocked {
 public:
  TerminationSignalsBlocked();
  ~TerminationSignalsBlocked();
  TerminationSignalsBlocked(const TerminationSignalsBlocked&) = delete;
  TerminationSignalsBlocked& operator=(const TerminationSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace kernscope::tracer
