# Runs cmake/check_layers.cmake on a small tree and checks its verdict: -DTREE, -DDEFINITION,
# -DCHECK (the script), -DEXPECT_FAIL (ON/OFF) and -DEXPECT (text the output must contain).
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${TREE} -DDEFINITION=${DEFINITION} -P ${CHECK}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(out "${out}${err}")
message("${out}")
if(EXPECT_FAIL AND rc EQUAL 0)
  message(FATAL_ERROR "the check passed; it should have failed")
elseif(NOT EXPECT_FAIL AND NOT rc EQUAL 0)
  message(FATAL_ERROR "the check failed (exit ${rc}); it should have passed")
endif()
string(FIND "${out}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the output lacks: ${EXPECT}")
endif()
