# cmake -DENGINE=exe -DMPIEXEC=mpiexec -DDIR=scratch -P planted_links.cmake
# Nothing the engine writes can be redirected: a symbolic link planted at every name it writes
# (the --csv and --trace targets, "<target>.tmp", a checkpoint's shard and manifest and their old
# ".tmp" names) leaves the file it points to byte-identical; each link is replaced by the new file.
# A non-empty directory at an old predictable temporary name does not block a checkpoint (the
# temporaries have fresh names). A --csv whose first line is another header is refused before
# training (exit 4) and left as it was.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/ckpt")
file(WRITE "${DIR}/victim" "precious: not to be truncated, appended to or replaced\n")
file(SHA256 "${DIR}/victim" before)
set(planted runs.csv runs.csv.tmp trace.json trace.json.tmp ckpt/manifest.json ckpt/manifest.json.tmp
            ckpt/rank00000.step00000002.bin ckpt/rank00000.step00000002.bin.tmp)
foreach(name ${planted})
  file(CREATE_LINK "${DIR}/victim" "${DIR}/${name}" SYMBOLIC)
endforeach()
execute_process(COMMAND ${MPIEXEC} -n 1 ${ENGINE} --batch 2 --steps 2 --csv ${DIR}/runs.csv --trace ${DIR}/trace.json
                        --checkpoint-dir ${DIR}/ckpt RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}\n${out}${err}")
endif()
file(SHA256 "${DIR}/victim" after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "the file behind the planted links changed")
endif()
foreach(name runs.csv trace.json ckpt/manifest.json ckpt/rank00000.step00000002.bin)
  if(IS_SYMLINK "${DIR}/${name}")
    message(FATAL_ERROR "${name} is still a link: written through it or not written")
  endif()
endforeach()
file(STRINGS "${DIR}/runs.csv" rows)
list(LENGTH rows n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "runs.csv: expected a header and one row, got:\n${rows}")
endif()

# The predictable temporary names are no longer used: a non-empty directory there is harmless.
file(MAKE_DIRECTORY "${DIR}/ckpt2/manifest.json.tmp/x" "${DIR}/ckpt2/rank00000.step00000001.bin.tmp/x")
execute_process(COMMAND ${MPIEXEC} -n 1 ${ENGINE} --batch 2 --steps 1 --checkpoint-dir ${DIR}/ckpt2
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT EXISTS "${DIR}/ckpt2/manifest.json")
  message(FATAL_ERROR "checkpoint beside directories at the old temporary names: exit ${code}\n${out}${err}")
endif()

file(WRITE "${DIR}/foreign.csv" "name,value\nalpha,1\n")
file(SHA256 "${DIR}/foreign.csv" before)
execute_process(COMMAND ${MPIEXEC} -n 1 ${ENGINE} --batch 2 --steps 2 --csv ${DIR}/foreign.csv
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(SHA256 "${DIR}/foreign.csv" after)
if(NOT code EQUAL 4 OR NOT err MATCHES "--csv .*foreign.csv: its first line is not this engine's header"
   OR out MATCHES "\"event\":\"step\"" OR NOT before STREQUAL after)
  message(FATAL_ERROR "--csv onto another table: exit ${code} (want 4, before training, file untouched)\n${out}${err}")
endif()
file(GLOB left "${DIR}/.*.tmp" "${DIR}/ckpt/.*.tmp")
if(left)
  message(FATAL_ERROR "temporaries left behind: ${left}")
endif()
