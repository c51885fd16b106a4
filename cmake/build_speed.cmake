# Build time (issue 28, item 1). The top-level CMakeLists.txt includes this file before any target
# is made (the compiler cache must be set by then) and calls kernscope_speed_up_targets() once every
# target exists. docs/building.md says what each part saves, as measured.

# --- a compiler cache ------------------------------------------------------------------------------
# ccache, where it is installed (`make deps` installs it) and no launcher was chosen: a second
# compile of the same source with the same flags (a new clone, a clean build folder, a switched
# branch) is read from the cache. KERNSCOPE_CCACHE=OFF turns it off.
option(KERNSCOPE_CCACHE "Compile through ccache when it is installed" ON)
if(KERNSCOPE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(KERNSCOPE_CCACHE_PROGRAM ccache)
  if(KERNSCOPE_CCACHE_PROGRAM)
    # Depend mode: ccache hashes the source and the headers the compiler's own -MD output names,
    # instead of running the preprocessor first. Measured on a cold cache (docs/building.md): the
    # preprocessor mode added 35 s of CPU to a 2-core `make run`; depend mode about 7.
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_DEPEND=true ${KERNSCOPE_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_DEPEND=true ${KERNSCOPE_CCACHE_PROGRAM})
    message(STATUS "kernscope: compiling through ${KERNSCOPE_CCACHE_PROGRAM}")
  endif()
endif()

# --- fewer collections of GCC's garbage collector -------------------------------------------------
# GCC collects its heap whenever it grew by 30 % past a floor that scales with the machine's memory;
# on the large unity units below that is measured work: one part of the analyses compiles in 63 s
# instead of 74 s (docs/building.md) at 1.5 instead of 1.2 GB. The parameters are GCC's documented
# knobs for this (its manual, "Optimize Options", ggc-min-expand and ggc-min-heapsize).
option(KERNSCOPE_GCC_GC_TUNING "Let GCC's heap grow further between garbage collections (faster compiles, more memory)" ON)
if(KERNSCOPE_GCC_GC_TUNING AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:--param=ggc-min-expand=400>
                      $<$<COMPILE_LANGUAGE:CXX>:--param=ggc-min-heapsize=1048576>)
endif()

# --- unity builds ----------------------------------------------------------------------------------
# Each core library, the CLI, the tracer and each GoogleTest program compile as one large translation
# unit (CMake's unity build, GROUP mode): the headers every file includes (the standard library with
# <regex>, fmt, simdjson, CLI11, GoogleTest) are then parsed, and their inline and template code
# generated, once per target instead of once per file. Measured (docs/building.md): the CLI's
# compile work 2.6x smaller.
#
# All files of a target share one translation unit, so their file-local names (anonymous
# namespaces, statics) must differ across the target. The files below have names that collide with
# another file's; each entry is a unity group of its own (files joined by '|' share one). When a new
# file collides (a "redefinition", "ambiguous" or "ambiguating" error in Unity/unity_*.cxx), give
# the name another spelling or add the file here; KERNSCOPE_UNITY_BUILD=OFF compiles every file on
# its own (make configure KERNSCOPE_UNITY_BUILD=OFF, or cmake -DKERNSCOPE_UNITY_BUILD=OFF).
option(KERNSCOPE_UNITY_BUILD "Compile each core library, the CLI, the tracer and each test program as one unity translation unit" ON)
set(kernscope_unity_targets kernscope_base kernscope_model kernscope_readers kernscope_analyses kernscope_ranks
    kernscope_render kernscope_export kernscope_tracer_config kernscope_tracer_core kernscope_session kernscope_cli_objects
    kernscope_unit_tests kernscope_golden_tests kernscope_tracer_tests kernscope_ncu_tests kernscope_ranks_tests
    kernscope_roofline_tests kernscope_model_cost_tests kernscope_diff_tests)
set(kernscope_unity_apart_kernscope_tracer_core termination_flush.cpp)  # its own on_signal()
set(kernscope_unity_apart_kernscope_readers  # each defines the reader registry's sniff() and read()
    nsys_rep_entry.cpp nsys_sqlite/nsys_sqlite_entry.cpp kineto/kineto_entry.cpp ncu/ncu_entry.cpp)
set(kernscope_unity_apart_kernscope_analyses
    "work/model_cost_config.cpp|work/roofline.cpp|steps/tracer_cost.cpp" "work/model_cost_report.cpp")
set(kernscope_unity_apart_kernscope_render "html/roofline_page.cpp|html/flame_chart.cpp|whatif_render.cpp")
set(kernscope_unity_apart_kernscope_ncu_tests unit/cublas_log_test.cpp)

# A library whose one translation unit would take most of a 2-core build is cut into parts (files in
# source order) that compile side by side; measured on 2 cores (docs/building.md), the analyses
# alone took 126 s of a 217 s `make run` as one unit. KERNSCOPE_UNITY_PARTS overrides every count.
set(KERNSCOPE_UNITY_PARTS 0 CACHE STRING "Unity translation units per library (0: the counts in cmake/build_speed.cmake)")
set(kernscope_unity_parts_kernscope_analyses 2)
set(kernscope_unity_parts_kernscope_readers 2)
set(kernscope_unity_parts_kernscope_unit_tests 3)

# The C++ sources of <target> sorted into unity groups: one for the library, the apart lists' own.
function(kernscope_unity target)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(apart_files "")
  set(index 0)
  foreach(group IN LISTS kernscope_unity_apart_${target})
    string(REPLACE "|" ";" files "${group}")
    foreach(file IN LISTS files)
      list(APPEND apart_files ${file})
      set(group_of_${file} "apart${index}")
    endforeach()
    math(EXPR index "${index} + 1")
  endforeach()
  set(parts 1)
  if(KERNSCOPE_UNITY_PARTS GREATER 0)
    set(parts ${KERNSCOPE_UNITY_PARTS})
  elseif(DEFINED kernscope_unity_parts_${target})
    set(parts ${kernscope_unity_parts_${target}})
  endif()
  set(grouped "")
  foreach(source IN LISTS sources)
    if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()  # objects of another target, headers
    endif()
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${dir} OUTPUT_VARIABLE path)
    cmake_path(RELATIVE_PATH path BASE_DIRECTORY ${dir} OUTPUT_VARIABLE relative)
    if(relative MATCHES "^\\.\\./")
      continue()  # data files configured into the build folder: tiny, compiled on their own
    elseif(relative IN_LIST apart_files)
      set_source_files_properties(${path} TARGET_DIRECTORY ${target} PROPERTIES
                                  UNITY_GROUP ${target}-${group_of_${relative}})
    else()
      list(APPEND grouped ${path})
    endif()
  endforeach()
  # The rest in `parts` runs of consecutive files.
  list(LENGTH grouped count)
  set(index 0)
  foreach(path IN LISTS grouped)
    math(EXPR part "${index} * ${parts} / ${count}")
    math(EXPR index "${index} + 1")
    set_source_files_properties(${path} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${target}-part${part})
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()

function(kernscope_speed_up_targets)
  if(KERNSCOPE_UNITY_BUILD)
    foreach(target IN LISTS kernscope_unity_targets)
      if(TARGET ${target})
        kernscope_unity(${target})
      endif()
    endforeach()
  endif()
endfunction()

# --- one compile of the core for the CLI and the Python extension ---------------------------------
# The core libraries are written out as imported targets (kernscope-core.cmake in the build folder),
# with what a build that links them must match; cmake/core_from.cmake reads them back when the
# Python extension is configured with -DKERNSCOPE_CORE_FROM=<this build folder>.
set(kernscope_core_libraries kernscope_base kernscope_model kernscope_readers kernscope_analyses kernscope_ranks
    kernscope_render kernscope_export kernscope_session)
function(kernscope_export_core)
  foreach(target IN LISTS kernscope_core_libraries)
    if(NOT TARGET ${target})
      return()
    endif()
  endforeach()
  export(TARGETS ${kernscope_core_libraries} FILE ${PROJECT_BINARY_DIR}/kernscope-core-targets.cmake)
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/kernscope-core.cmake CONTENT [[
# Written by kernscope's CMakeLists.txt (cmake/build_speed.cmake): its core libraries, as built here.
set(KERNSCOPE_CORE_SOURCE_DIR "@PROJECT_SOURCE_DIR@")
set(KERNSCOPE_CORE_PIC "@CMAKE_POSITION_INDEPENDENT_CODE@")
set(KERNSCOPE_CORE_COMPILER "@CMAKE_CXX_COMPILER_ID@ @CMAKE_CXX_COMPILER_VERSION@")
set(KERNSCOPE_CORE_BUILD_TYPE "@CMAKE_BUILD_TYPE@")
set(KERNSCOPE_CORE_LIBRARIES "@kernscope_core_libraries@")
include("${CMAKE_CURRENT_LIST_DIR}/kernscope-core-targets.cmake")
]] @ONLY)
endfunction()
