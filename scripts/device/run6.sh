#!/bin/bash
# On the device, one call (stop 34): are the 16-core waits the ranks wandering between vCPUs? Calibrate
# with every mpirun-started rank bound to its own core, validate the stop-30 subset with the ranks bound,
# then validate it again on the same file with Open MPI's default binding (to the socket, for more than
# 2 ranks: orterun(1)), the stop-30 condition. Each phase's outputs are tarred into $OUT as it ends (the
# device tool returns few files and a phase cut by its timeout still leaves the earlier ones).
# MACHINE=<file>: skip the calibration, validate on that file; MODES: which validations, in order.
cd .dev16 && tar xJf bundle.tar.xz && cd ..
. .dev16/env.sh
export PMIX_MCA_pcompress_base_silence_warning=1
ENGINE=$(which weakscale-engine)
W=/tmp/r6 && mkdir -p $W/pinned $W/default
{ nproc; lscpu; } > $W/host.txt
pin() { export OMPI_MCA_rmaps_base_mapping_policy=core OMPI_MCA_hwloc_base_binding_policy=core; }
unpin() { unset OMPI_MCA_rmaps_base_mapping_policy OMPI_MCA_hwloc_base_binding_policy; }
pin
mpirun -n 16 sh -c 'echo "rank $OMPI_COMM_WORLD_RANK $(grep Cpus_allowed_list /proc/self/status)"' | sort -k2n > $W/bindings-pinned.txt 2>&1
unpin
mpirun -n 16 sh -c 'echo "rank $OMPI_COMM_WORLD_RANK $(grep Cpus_allowed_list /proc/self/status)"' | sort -k2n > $W/bindings-default.txt 2>&1
head -3 $W/bindings-pinned.txt $W/bindings-default.txt
pin
SECONDS=0
if [ -n "$MACHINE" ]; then  # a file calibrated by an earlier call: validate only
  cp "$MACHINE" $W/device16.yaml; echo "calibrate: skipped, $MACHINE"
else
timeout ${CALIBRATE_S:-170} weakscale calibrate --out $W/device16.yaml --mpi-probe $(which weakscale-calibrate-mpi) \
  --note "the lent device machine's 16 CPU cores, an idle GPU beside them, MPI ranks bound to cores (stop 34)" > $W/calibrate.log 2>&1
echo "calibrate: rc $? in $SECONDS s"; grep -A4 "^variability" $W/device16.yaml
tar czf $OUT/calibrate.tgz -C /tmp r6/host.txt r6/bindings-pinned.txt r6/bindings-default.txt r6/calibrate.log r6/device16.yaml
fi
for mode in ${MODES:-pinned default}; do
  if [ $mode = pinned ]; then pin; else unpin; fi
  SECONDS=0
  timeout ${VALIDATE_S:-195} weakscale validate --machine $W/device16.yaml --out $W/$mode --engine $ENGINE \
    --no-plot --ranks-max 16 --repeat ${REPEAT:-2} --runs ${RUNS:-r01 r21 r25 r28 r29 r32} > $W/$mode/validate.log 2>&1
  echo "validate ($mode): rc $? in $SECONDS s"; grep -E "median|^validate: r[0-9]|run r[0-9]" $W/$mode/validate.log | head -16
  tar czf $OUT/validate-$mode.tgz -C /tmp r6/$mode
done
