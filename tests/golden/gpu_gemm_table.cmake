# Re-derives results/gpu/h100-sxm/gemm-efficiency.csv and alps.yaml's grid from the raw runs.
set(runs "${SOURCE}/results/gpu/h100-sxm")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
          "${PYTHON}" "${SOURCE}/benchmarks/gpu/gemm_table.py" "${runs}/run1" "${runs}/run2" "${runs}/run3"
          --csv "${DIR}/gemm-efficiency.csv" --yaml "${DIR}/alps-gemm.yaml"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gemm_table.py failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${DIR}/gemm-efficiency.csv" "${runs}/gemm-efficiency.csv"
                RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "${runs}/gemm-efficiency.csv is not what gemm_table.py makes of the runs (${DIR}/gemm-efficiency.csv)")
endif()
file(READ "${DIR}/alps-gemm.yaml" lines)
file(READ "${SOURCE}/machines/alps.yaml" alps)
string(FIND "${alps}" "  gemm_efficiency:\n${lines}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "machines/alps.yaml does not hold the gemm_efficiency lines gemm_table.py writes (${DIR}/alps-gemm.yaml)")
endif()
message(STATUS "gemm_table.py reproduces the CSV and alps.yaml's grid:\n${out}")
