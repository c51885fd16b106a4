// The fleet reduce's binding (fleet_reduce_binding.cpp), registered by the module in kernscope_ext.cpp.
#pragma once

#include <nanobind/nanobind.h>

namespace kernscope::python {

// Adds _core.reduce_digests; malformed tables raise ValueError naming the table and column.
void bind_fleet_reduce(nanobind::module_& m);

}  // namespace kernscope::python
