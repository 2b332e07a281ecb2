# cmake -DWEAKSCALE=exe -DSOURCE=repo -DGOLDEN=file -DOUTPUT=stdout|path -DARGS="a|b|c" -DDIR=scratch
#       -P compare.cmake
# Runs `weakscale ARGS` from the repository root and compares its OUTPUT with GOLDEN byte for
# byte; on a difference, prints the unified diff's first lines and how to regenerate.
cmake_minimum_required(VERSION 3.20)  # new policies: "@DIR@" is a literal, not a variable reference
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
string(REPLACE "@DIR@" "${DIR}" ARGS "${ARGS}")
string(REPLACE "@DIR@" "${DIR}" OUTPUT "${OUTPUT}")
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${WEAKSCALE} ${ARGS} WORKING_DIRECTORY "${SOURCE}" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "weakscale exited ${code}\n${out}${err}")
endif()
if(OUTPUT STREQUAL "stdout")
  set(actual "${DIR}/stdout")
  file(WRITE "${actual}" "${out}")
else()
  set(actual "${OUTPUT}")
endif()
if(NOT EXISTS "${GOLDEN}")
  message(FATAL_ERROR "${GOLDEN} is missing: run scripts/update-golden.sh")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${GOLDEN}" "${actual}" RESULT_VARIABLE differ)
if(differ)
  execute_process(COMMAND diff -u "${GOLDEN}" "${actual}" OUTPUT_VARIABLE diff)
  string(SUBSTRING "${diff}" 0 4000 diff)
  message(FATAL_ERROR "${actual} differs from ${GOLDEN}:\n${diff}\nIf the change is intended, run "
                      "scripts/update-golden.sh [build-dir] and review git diff tests/golden.")
endif()
file(REMOVE_RECURSE "${DIR}")
