# The programs a wheel carries beside the Python extension: the CLI as kernscope/bin/kernscope (run
# by the `kernscope` console command, python/_kernscope_cli) and the tracer as
# kernscope/lib/libkernscope_tracer.so, which is where `kernscope record` looks for it relative to
# its own binary (tools/kernscope/cmd_record.cpp). `make wheel` (scripts/build-wheel.sh) builds the
# wheel with -DKERNSCOPE_CORE_FROM=build, so both are the Release build's files, not compiled again.

# In the build folder that compiles them: a target that builds both, and a file that names them for
# a KERNSCOPE_CORE_FROM build (kernscope-programs.cmake, beside kernscope-core.cmake).
function(kernscope_export_programs)
  if(NOT TARGET kernscope)
    return()
  endif()
  set(programs kernscope)
  set(content "# Written by kernscope's CMakeLists.txt (cmake/wheel_layout.cmake): the programs a wheel carries.\n")
  string(APPEND content "set(KERNSCOPE_CORE_CLI \"$<TARGET_FILE:kernscope>\")\n")
  if(TARGET kernscope_tracer)
    list(APPEND programs kernscope_tracer)
    string(APPEND content "set(KERNSCOPE_CORE_TRACER \"$<TARGET_FILE:kernscope_tracer>\")\n")
  else()
    # Built without CUPTI: the wheel would have no `record`; scripts/build-wheel.sh refuses it.
    string(APPEND content "set(KERNSCOPE_CORE_TRACER \"\")\n")
  endif()
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/kernscope-programs.cmake CONTENT "${content}")
  add_custom_target(kernscope_programs DEPENDS ${programs})
endfunction()

# In the Python build (KERNSCOPE_CORE_FROM): install them into the package.
function(kernscope_install_programs core_from)
  set(programs_file ${core_from}/kernscope-programs.cmake)
  if(NOT EXISTS ${programs_file})
    message(FATAL_ERROR "kernscope: ${core_from} names no CLI (no kernscope-programs.cmake): configure it with "
                        "the CLI (make cli)")
  endif()
  include(${programs_file})
  foreach(program IN ITEMS ${KERNSCOPE_CORE_CLI} ${KERNSCOPE_CORE_TRACER})
    if(NOT EXISTS ${program})
      message(FATAL_ERROR "kernscope: ${program} is not built yet: cmake --build ${core_from} --target kernscope_programs")
    endif()
  endforeach()
  install(PROGRAMS ${KERNSCOPE_CORE_CLI} DESTINATION kernscope/bin)
  if(KERNSCOPE_CORE_TRACER)
    install(FILES ${KERNSCOPE_CORE_TRACER} DESTINATION kernscope/lib)
  endif()
endfunction()
