#include "tracer/termination_flush.hpp"
#include "base/thread_name.hpp"

#include <semaphore.h>
#include <signal.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <thread>

namespace kernscope::tracer {
namespace {

// A signal handler may only use async-signal-safe calls: it posts a semaphore and waits on another
// (a futex underneath); the writing happens on the waiting thread, which may take locks and allocate.
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};  // the ones that end a program by default

sem_t g_request;
sem_t g_done;
void (*g_finish)() = nullptr;
std::chrono::milliseconds g_bound{0};
std::atomic<bool> g_requested{false};

void on_signal(int signal_number) {
  if (!g_requested.exchange(true)) sem_post(&g_request);
  timespec deadline{};
  clock_gettime(CLOCK_REALTIME, &deadline);
  const auto ms = g_bound.count();
  deadline.tv_sec += static_cast<time_t>(ms / 1000);
  deadline.tv_nsec += static_cast<long>(ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  while (sem_timedwait(&g_done, &deadline) != 0 && errno == EINTR) {
  }
  sem_post(&g_done);  // a second signal (another thread, or the same one again) need not wait
  // Back to the default action; the signal is blocked while this handler runs, so it is delivered
  // as the handler returns and the program ends as it would have without the tracer.
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal_number, &fallback, nullptr);
  raise(signal_number);
}

sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  return set;
}

// A child forked from the traced program has no waiting thread (fork copies only the calling
// thread) and no trace of its own to write: the signals it inherited from us go back to their
// default, or the child would wait the whole bound before dying.
void restore_defaults_in_child() {
  for (int s : kSignals) {
    struct sigaction current {};
    if (sigaction(s, nullptr, &current) != 0 || current.sa_handler != on_signal) continue;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(s, &fallback, nullptr);
  }
}

void wait_and_finish() {
  name_this_thread("ks-exit-flush");
  while (sem_wait(&g_request) != 0 && errno == EINTR) {
  }
  g_finish();
  sem_post(&g_done);
}

}  // namespace

int finish_on_termination(void (*finish)(), std::chrono::milliseconds bound) {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return 0;
  g_finish = finish;
  g_bound = bound;
  sem_init(&g_request, 0, 0);
  sem_init(&g_done, 0, 0);

  {
    TerminationSignalsBlocked blocked;  // the waiting thread must never run the handler itself
    std::thread(wait_and_finish).detach();
  }

  pthread_atfork(nullptr, nullptr, restore_defaults_in_child);
  int taken = 0;
  for (int s : kSignals) {
    struct sigaction current {};
    if (sigaction(s, nullptr, &current) != 0) continue;
    const bool default_action = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (!default_action) continue;  // ignored or handled by the program: its choice stands
    struct sigaction ours {};
    ours.sa_handler = on_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    if (sigaction(s, &ours, nullptr) == 0) ++taken;
  }
  return taken;
}

TerminationSignalsBlocked::TerminationSignalsBlocked() {
  const sigset_t block = termination_signals();
  pthread_sigmask(SIG_BLOCK, &block, &previous_);
}

TerminationSignalsBlocked::~TerminationSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace kernscope::tracer
