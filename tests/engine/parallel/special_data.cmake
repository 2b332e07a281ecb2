# cmake -DENGINE=exe -DMPIEXEC=mpiexec -DDIR=scratch -P special_data.cmake
# Inputs that would hang the engine or exhaust its memory are refused on every rank before any
# read, with exit 2 and one line naming the flag: a FIFO as --data or --validation-data (an
# open or a read would wait for a writer forever), a file above the 1 GiB limit (sparse here:
# nothing of it is read), and an explicitly empty --layout (not the default layout).
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(COMMAND mkfifo "${DIR}/fifo" RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "mkfifo failed")
endif()
execute_process(COMMAND truncate -s 1073741825 "${DIR}/huge.txt" RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "truncate failed")
endif()
set(engine ${MPIEXEC} -n 2 --oversubscribe ${ENGINE})
function(expect_refusal expect)
  # The time limit turns a hang into a failure of this test rather than of the whole run.
  execute_process(COMMAND ${engine} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  if(NOT code EQUAL 2 OR NOT err MATCHES "${expect}" OR out MATCHES "\"event\":\"start\"")
    message(FATAL_ERROR "${ARGN}: exit ${code} (want 2 before training, '${expect}')\n${out}${err}")
  endif()
endfunction()
expect_refusal("--data ${DIR}/fifo: is not a regular file [(]a device, FIFO or socket[)]" --data "${DIR}/fifo")
expect_refusal("--validation-data ${DIR}/fifo: is not a regular file"
               --eval-memorization "${DIR}/m.csv" --validation-data "${DIR}/fifo")
expect_refusal("--data ${DIR}/huge.txt: is 1073741825 bytes, above the limit of 1 GiB" --data "${DIR}/huge.txt")
execute_process(COMMAND ${engine} --layout "" RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 2 OR NOT err MATCHES "--layout \"\": expected DxXxYxZ")
  message(FATAL_ERROR "--layout \"\": exit ${code}\n${out}${err}")
endif()
