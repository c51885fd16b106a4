// kernscope._core.fleet_digest(path, bin_ns): one trace reduced by the C++ core to the fleet tier's
// digest tables (ranks/ranks_fleet_digest.hpp), as dicts of column lists (fleet_digest_columns.hpp)
// that python/kernscope/fleet turns into Arrow tables; and expand_trace_arguments. Kept apart from
// the trace binding: it hands out owned copies of small results, not views of a loaded trace.
#include "fleet_digest_binding.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "fleet_digest_columns.hpp"

namespace nb = nanobind;
using namespace kernscope;
using namespace kernscope::ranks;

namespace kernscope::python {

void bind_fleet_digest(nb::module_& m, nb::handle error_type) {
  m.def(
      "fleet_digest",
      [error_type](const std::string& path, std::int64_t bin_ns) {
        Result<FleetDigest> digest;
        {
          nb::gil_scoped_release release;  // a pool of threads may reduce several traces at once
          digest = fleet_digest(path, bin_ns);
        }
        if (!digest) {
          PyErr_SetString(error_type.ptr(), digest.error().message.c_str());
          throw nb::python_error();
        }
        return digest_tables(*digest);
      },
      nb::arg("path"), nb::arg("bin_ns"),
      "One trace reduced to the fleet tier's tables (ranks, collectives, steps, kernels, busy): dicts of column lists.");
  m.def(
      "expand_trace_arguments",
      [error_type](const std::vector<std::string>& arguments) {
        auto paths = expand_trace_arguments(arguments);
        if (!paths) {
          PyErr_SetString(error_type.ptr(), paths.error().message.c_str());
          throw nb::python_error();
        }
        return *paths;
      },
      nb::arg("arguments"), "DIR, GLOB or FILE arguments as the sorted trace paths `kernscope ranks` reads.");
}

}  // namespace kernscope::python
