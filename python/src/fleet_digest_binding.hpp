// The fleet digest's binding (fleet_digest_binding.cpp), registered by the module in kernscope_ext.cpp.
#pragma once

#include <nanobind/nanobind.h>

namespace kernscope::python {

// Adds _core.fleet_digest; its failures raise `error_type` (kernscope.Error) with the core's message.
void bind_fleet_digest(nanobind::module_& m, nanobind::handle error_type);

}  // namespace kernscope::python
