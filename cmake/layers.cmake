# Runs cmake/check_layers.cmake before any library compiles: an include that crosses the layers
# written in ARCHITECTURE.md (its ```layers block) stops the build with the file, line and include.
# Every library whose layer is named there as kernscope_<layer> waits for the check.
file(GLOB_RECURSE kernscope_layer_inputs CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/* ${PROJECT_SOURCE_DIR}/include/* ${PROJECT_SOURCE_DIR}/tools/kernscope/*
  ${PROJECT_SOURCE_DIR}/python/src/*)
list(FILTER kernscope_layer_inputs INCLUDE REGEX "\\.(cpp|hpp|h|cc|hh|cxx|hxx|cu|cuh|in)$")
set(kernscope_layer_stamp ${CMAKE_BINARY_DIR}/kernscope_layers.stamp)
add_custom_command(OUTPUT ${kernscope_layer_stamp}
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DSTAMP=${kernscope_layer_stamp}
          -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
  DEPENDS ${kernscope_layer_inputs} ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
  COMMENT "Checking includes against the layers of ARCHITECTURE.md"
  VERBATIM)
add_custom_target(kernscope_layers ALL DEPENDS ${kernscope_layer_stamp})

# The layer names, read from the same block, give the libraries that wait for the check.
file(READ ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md kernscope_architecture)
string(FIND "${kernscope_architecture}" "```layers\n" block_start)
string(SUBSTRING "${kernscope_architecture}" ${block_start} -1 kernscope_architecture)
string(FIND "${kernscope_architecture}" "\n```\n" block_end)
string(SUBSTRING "${kernscope_architecture}" 0 ${block_end} kernscope_architecture)
string(REGEX MATCHALL "\n[a-z_0-9]+[ \t]*->" kernscope_layer_lines "${kernscope_architecture}")
foreach(line IN LISTS kernscope_layer_lines)
  string(REGEX REPLACE "[\n \t]|->" "" layer "${line}")
  if(TARGET kernscope_${layer})
    add_dependencies(kernscope_${layer} kernscope_layers)
  endif()
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md)
