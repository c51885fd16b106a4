// A module built stripped (no .symtab) for the native sampler's test: spin_in_stripped is a
// dynamic symbol, so it has a name; the static function it calls has none left anywhere, so its
// frames must come out as the module and an offset, flagged unresolved.
#include <time.h>

namespace {

long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1'000'000'000L + t.tv_nsec;
}

__attribute__((noinline)) long spin_without_symbol(long until_ns) {
  long rounds = 0;
  while (now_ns() < until_ns) ++rounds;
  return rounds;
}

}  // namespace

extern "C" __attribute__((visibility("default"), noinline)) long spin_in_stripped(long ms) {
  volatile long rounds = spin_without_symbol(now_ns() + ms * 1'000'000L);
  return rounds + 1;  // work after the call: it is not a tail call, so this frame stays on the stack
}
