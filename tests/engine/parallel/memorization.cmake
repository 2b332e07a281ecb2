# cmake -DENGINE=exe -DMPIEXEC=mpiexec -DDIR=scratch -P memorization.cmake
# The memorization options end to end on 2 ranks: text documents (--data-order chunks) trained
# with the Goldfish loss, evaluated before training and every 2 steps (a CSV row and a JSON line
# each), then an evaluation-only run (--steps 0) that appends one row and prints no summary.
# The rows of a memorization CSV (header included) into `out`, failing unless there are `count`.
function(read_rows file count what out)
  file(STRINGS ${file} lines)
  list(LENGTH lines n)
  if(NOT n EQUAL count)
    message(FATAL_ERROR "${what}: expected ${count} lines (a header and the rows):\n${lines}")
  endif()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
string(REPEAT "the quick brown fox jumps over the lazy dog; " 8 text)
file(WRITE ${DIR}/train.txt "${text}")
string(REPEAT "pack my box with five dozen liquor jugs now. " 8 held_out)
file(WRITE ${DIR}/validation.txt "${held_out}")
set(common ${MPIEXEC} -n 2 --oversubscribe ${ENGINE} --layout 2x1x1x1 --seq 16 --batch 4 --data ${DIR}/train.txt
           --data-order chunks --goldfish-k 4 --goldfish-context 4 --eval-memorization ${DIR}/memorization.csv
           --eval-prefix 8 --eval-length 8 --validation-data ${DIR}/validation.txt)
execute_process(COMMAND ${common} --steps 4 --eval-every 2 RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}\n${out}${err}")
endif()
foreach(want "\"goldfish_k\":4" "\"event\":\"memorization\"" "\"exact_match_rate\":[0-9]" "\"validation_loss\":[0-9]"
             "\"event\":\"summary\"")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "output lacks ${want}:\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${common} --steps 0 RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR out MATCHES "\"event\":\"summary\"" OR NOT out MATCHES "\"event\":\"memorization\"")
  message(FATAL_ERROR "evaluation-only run: exit ${code}\n${out}${err}")
endif()
read_rows(${DIR}/memorization.csv 5 "rows of steps 0, 2, 4, then 0" rows)
list(GET rows 0 header)
if(NOT header STREQUAL "layout,goldfish_k,goldfish_context,step,sequences_trained,sequences,prefix,length,exact_matches,exact_match_rate,token_accuracy,train_loss,validation_loss,seconds")
  message(FATAL_ERROR "header: ${header}")
endif()
set(expected_steps 0 2 4 0)
foreach(i 1 2 3 4)
  list(GET rows ${i} row)
  string(REPLACE "," ";" fields "${row}")
  list(GET fields 3 step)
  list(GET fields 5 sequences)
  list(GET fields 10 accuracy)
  math(EXPR want_index "${i} - 1")
  list(GET expected_steps ${want_index} want_step)
  if(NOT step EQUAL want_step OR NOT sequences EQUAL 4 OR accuracy LESS 0 OR accuracy GREATER 1)
    message(FATAL_ERROR "row ${i}: ${row}")
  endif()
endforeach()
# The untrained model's two evaluations (row 1, before training; row 4, --steps 0) are the same
# computation: the same answers.
list(GET rows 1 first)
list(GET rows 4 again)
string(REGEX REPLACE ",[^,]*$" "" first "${first}")
string(REGEX REPLACE ",[^,]*$" "" again "${again}")
if(NOT first STREQUAL again)
  message(FATAL_ERROR "the same evaluation differs:\n${first}\n${again}")
endif()
# The distributed optimizer evaluates too, after gathering its last update (the continuations equal
# the 1-rank run's: DistributedOptimizer.MemorizationMatchesTheSerialRun in engine_pipeline_*).
execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe ${ENGINE} --layout tp=1,dp=2,zero=1 --seq 16 --batch 4
                        --data ${DIR}/train.txt --eval-memorization ${DIR}/zero.csv --eval-prefix 8 --eval-length 8
                        --steps 2 --eval-every 2
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"event\":\"memorization\"")
  message(FATAL_ERROR "zero=1 evaluation: exit ${code}\n${out}${err}")
endif()
read_rows(${DIR}/zero.csv 3 "zero=1 evaluation, rows of steps 0 and 2" zero_rows)
