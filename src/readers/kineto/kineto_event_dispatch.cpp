// Picks the event parser compiled for this CPU.
#include "readers/kineto/kineto_event.hpp"

namespace kernscope::kineto {
namespace fallback {
std::unique_ptr<EventParser::Backend> make_event_parser();
}
#ifdef KERNSCOPE_HAVE_HASWELL_PARSER
namespace haswell {
std::unique_ptr<EventParser::Backend> make_event_parser();
}
#endif

EventParser::EventParser() {
#ifdef KERNSCOPE_HAVE_HASWELL_PARSER
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt")) {
    backend_ = haswell::make_event_parser();
    kernel_ = "haswell";
    return;
  }
#endif
  backend_ = fallback::make_event_parser();
  kernel_ = "fallback";
}

}  // namespace kernscope::kineto
