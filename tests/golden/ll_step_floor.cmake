# benchmarks/collectives/ll_step_floor.py on tables whose answers are known in closed form, then on the
# shipped published.csv (the figure results/README.md quotes).
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(header "machine,library,op,nodes,devices,bytes,busbw_gbps,source\n")

# Runs the script on `csv` (extra arguments after `expect` go to it) and wants every `;`-separated
# line of `expect` in its output.
function(run_floor csv expect)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
            "${PYTHON}" "${SOURCE}/benchmarks/collectives/ll_step_floor.py" "${csv}" ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ll_step_floor.py ${csv} failed (${rc}):\n${out}\n${err}")
  endif()
  foreach(line IN LISTS expect)
    string(FIND "${out}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "ll_step_floor.py ${csv}: expected '${line}' in:\n${out}")
    endif()
  endforeach()
  message(STATUS "ll_step_floor.py ${csv}:\n${out}")
endfunction()

# Two 16 KiB steps of 10 and 16 us (busbw = 16384 B / step time): one line prices both alike, and the
# best it can do is (16 - 10) / (16 + 10) = 23.1 % on each. A 128 KiB step of 32 us sets Simple's
# floor; a 16 KiB step of 40 us runs at Simple's pace.
file(WRITE "${DIR}/pair.csv" "${header}"
  "m,l,all-gather,2,16,2 MiB,4.096,s\n"
  "m,l,all-gather,2,16,256 KiB,1.6384,s\n"
  "m,l,reduce-scatter,2,16,256 KiB,1.024,s\n"
  "m,l,all-gather,4,32,512 KiB,0.4096,s\n"
  "m,l,all-reduce,2,16,256 KiB,9.9,s (not a ring step: ignored)\n"
  "m,l,all-gather,1,8,128 KiB,9.9,s (one node: ignored)\n")
run_floor("${DIR}/pair.csv" "takes 32.0 us (Simple's floor);2 rows step faster;worst |busbw error| 23.1 %;16 KiB steps run fast (10.0, 16.0 us) and at Simple's pace (all-gather 4 nodes 512 KiB 40.0 us)"
          --machine m --library l)

# Three steps on one line through the origin (busbw 2.048 GB/s each): a line fits them exactly.
file(WRITE "${DIR}/line.csv" "${header}"
  "m,l,all-gather,2,16,2 MiB,2.048,s\n"
  "m,l,all-gather,2,16,128 KiB,2.048,s\n"
  "m,l,all-gather,2,16,256 KiB,2.048,s\n"
  "m,l,reduce-scatter,2,16,512 KiB,2.048,s\n")
run_floor("${DIR}/line.csv" "takes 64.0 us (Simple's floor);3 rows step faster;worst |busbw error| 0.0 %"
          --machine m --library l)

# The figure results/README.md quotes (the script's defaults: Frontier RCCL).
run_floor("${SOURCE}/benchmarks/collectives/published.csv" "worst |busbw error| 23.7 %")
