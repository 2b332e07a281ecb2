# cmake -DENGINE=exe -DMPIEXEC=mpiexec -DDIR=scratch -P trace_and_summary.cmake
# One 2-rank data-parallel run with --trace, --csv and --peak: the merged trace holds both
# ranks' compute and comm threads, GEMM phases and the data-parallel all-reduce; the summary
# line has the breakdown and percent of peak; the CSV has a header and one row per run.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(run ${MPIEXEC} -n 2 --oversubscribe ${ENGINE} --layout 2x1x1x1 --batch 4 --steps 3 --peak "96 GFLOP/s"
        --trace ${DIR}/trace.json --csv ${DIR}/runs.csv)
foreach(i 1 2)
  execute_process(COMMAND ${run} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit ${code}\n${out}${err}")
  endif()
endforeach()
foreach(want "\"event\":\"summary\"" "\"percent_of_peak_model\":[0-9]" "\"comm\":{\"data\":{" "\"measured_steps\":1"
             "\"overlap\":{\"data\":{")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "summary lacks ${want}:\n${out}")
  endif()
endforeach()
file(READ ${DIR}/trace.json trace)
string(JSON events LENGTH "${trace}" traceEvents)
if(events LESS 100)
  message(FATAL_ERROR "only ${events} trace events")
endif()
foreach(want "\"pid\":0" "\"pid\":1" "\"name\":\"fwd.block0.qkv.gemm\"" "\"name\":\"bwd.block1.up.dw_gemm\""
             "\"name\":\"allreduce.data\"" "\"name\":\"thread_name\"")
  if(NOT trace MATCHES "${want}")
    message(FATAL_ERROR "trace lacks ${want}")
  endif()
endforeach()
file(STRINGS ${DIR}/runs.csv rows)
list(LENGTH rows n)
list(GET rows 0 header)
if(NOT n EQUAL 3 OR NOT header MATCHES "^layout,ranks,")
  message(FATAL_ERROR "expected a header and two rows:\n${rows}")
endif()
