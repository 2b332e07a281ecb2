# cmake -DENGINE=exe -DMPIEXEC=mpiexec -DDIR=scratch -P checkpoint_cleanup.cmake
# What a killed writer or an earlier, larger job left in a checkpoint directory is cleaned by the
# next checkpoint: half-written shards and manifest (the staged ".NAME.XXXXXX.tmp" temporaries, and
# the "NAME.tmp" of older engines), shards and temporaries of ranks this job does not have, this
# job's shards of older steps. Other files are left alone. The new checkpoint is complete.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/ckpt")
foreach(stale rank00000.step00000001.bin.tmp rank00001.step00000009.bin.tmp manifest.json.tmp
              rank00005.step00000001.bin rank00000.step00000001.bin .rank00000.step00000001.bin.Ab3xZ9.tmp
              .rank00001.step00000002.bin.q8Lk2P.tmp .rank00007.step00000001.bin.zzzzzz.tmp
              .manifest.json.H4ppy1.tmp .notes.txt.tmp)
  file(WRITE "${DIR}/ckpt/${stale}" "stale")
endforeach()
execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe ${ENGINE} --layout 2x1x1x1 --batch 4 --steps 2
                        --checkpoint-dir ${DIR}/ckpt RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}\n${out}${err}")
endif()
file(GLOB left RELATIVE "${DIR}/ckpt" "${DIR}/ckpt/*")
list(SORT left)
set(want .notes.txt.tmp manifest.json rank00000.step00000002.bin rank00001.step00000002.bin)
if(NOT "${left}" STREQUAL "${want}")
  message(FATAL_ERROR "checkpoint directory holds '${left}', expected '${want}'")
endif()
