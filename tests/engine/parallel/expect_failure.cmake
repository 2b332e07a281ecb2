# cmake -DCOMMAND="a|b|c" -DEXPECT=regex [-DEXPECT_CODE=n] -P expect_failure.cmake  (arguments
# separated by |). Passes when COMMAND exits non-zero (EXPECT_CODE if given) AND its output matches
# EXPECT: a rejected run must fail, with the documented exit code, and say why.
string(REPLACE "|" ";" COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(code EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit, got 0\n${out}${err}")
endif()
if(DEFINED EXPECT_CODE AND NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "expected exit ${EXPECT_CODE}, got ${code}\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}':\n${out}${err}")
endif()
