# Re-derives alps.yaml's elementwise_throughput lines from the raw runs of the two measured GPUs
# (results/gpu/h100-sxm and results/gpu/h200): elementwise_rates.py must print them verbatim.
# (MachineFiles.GpuElementwiseRatesComeFromTheMeasuredGpus checks all three GPU files' loaded rates
# against the CSVs with its own arithmetic.)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
          "${PYTHON}" "${SOURCE}/benchmarks/gpu/elementwise_rates.py" "${SOURCE}/results/gpu/h100-sxm"
          "${SOURCE}/results/gpu/h200" --bandwidth 4e12
  RESULT_VARIABLE rc OUTPUT_VARIABLE lines ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "elementwise_rates.py failed (${rc}):\n${lines}\n${err}")
endif()
if(NOT lines MATCHES "^  elementwise_throughput:\n")
  message(FATAL_ERROR "elementwise_rates.py printed no elementwise_throughput block:\n${lines}")
endif()
file(READ "${SOURCE}/machines/alps.yaml" alps)
string(FIND "${alps}" "${lines}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "machines/alps.yaml does not hold the elementwise_throughput lines elementwise_rates.py prints:\n${lines}")
endif()
message(STATUS "elementwise_rates.py reproduces alps.yaml's element-wise rates:\n${lines}")
