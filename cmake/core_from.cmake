# The Python extension built on the core libraries of another kernscope build folder
# (-DKERNSCOPE_CORE_FROM=<folder>; `make python` passes the Release build's), so the core is compiled
# once for the CLI, the tests and the extension. That folder's kernscope-core.cmake (written by
# cmake/build_speed.cmake) makes them imported targets; they must have been compiled from this
# source tree, as position-independent code, by the same compiler, in the same build type.
get_filename_component(kernscope_core_from "${KERNSCOPE_CORE_FROM}" ABSOLUTE)
set(kernscope_core_file ${kernscope_core_from}/kernscope-core.cmake)
if(NOT EXISTS ${kernscope_core_file})
  message(FATAL_ERROR "kernscope: KERNSCOPE_CORE_FROM=${KERNSCOPE_CORE_FROM} is not a configured kernscope build "
                      "folder (no kernscope-core.cmake); configure and build it first (make build)")
endif()
include(${kernscope_core_file})

file(REAL_PATH "${KERNSCOPE_CORE_SOURCE_DIR}" core_source)
file(REAL_PATH "${PROJECT_SOURCE_DIR}" this_source)
set(mismatch "")
if(NOT core_source STREQUAL this_source)
  list(APPEND mismatch "its sources are ${core_source}, not ${this_source}")
endif()
if(NOT KERNSCOPE_CORE_PIC)
  list(APPEND mismatch "it was not configured with -DCMAKE_POSITION_INDEPENDENT_CODE=ON")
endif()
if(NOT KERNSCOPE_CORE_COMPILER STREQUAL "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  list(APPEND mismatch "its compiler is ${KERNSCOPE_CORE_COMPILER}, this one ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
endif()
if(NOT KERNSCOPE_CORE_BUILD_TYPE STREQUAL CMAKE_BUILD_TYPE)
  list(APPEND mismatch "its build type is ${KERNSCOPE_CORE_BUILD_TYPE}, this one ${CMAKE_BUILD_TYPE}")
endif()
if(mismatch)
  list(JOIN mismatch "; " mismatch)
  message(FATAL_ERROR "kernscope: cannot link the core libraries of ${kernscope_core_from}: ${mismatch}")
endif()
foreach(library IN LISTS KERNSCOPE_CORE_LIBRARIES)
  get_target_property(location ${library} LOCATION)
  if(NOT EXISTS "${location}")
    message(FATAL_ERROR "kernscope: ${location} is not built yet: "
                        "cmake --build ${kernscope_core_from} --target kernscope_session")
  endif()
endforeach()
message(STATUS "kernscope: the Python extension links the core libraries of ${kernscope_core_from}")
