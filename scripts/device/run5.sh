#!/bin/bash
# On the device, one call (stop 30): recalibrate the 16 cores, then validate a 1-16-rank subset of the
# matrix on that file with stop 29's `validate` (each configuration run REPEAT times, the fastest run and
# each tracker probe's fastest pass kept), the check results/device16/README.md left open. MACHINE=<file>:
# skip the calibration and validate on that file (a second call on the first call's file).
# Outputs are tarred: the device tool returns few files.
cd .dev16 && tar xJf bundle.tar.xz && cd ..
. .dev16/env.sh
export PMIX_MCA_pcompress_base_silence_warning=1
ENGINE=$(which weakscale-engine)
mkdir -p /tmp/r5/val
nproc > /tmp/r5/host.txt; lscpu >> /tmp/r5/host.txt
SECONDS=0
if [ -n "$MACHINE" ]; then  # a file calibrated by an earlier call: validate only
  cp "$MACHINE" /tmp/r5/device16.yaml; echo "calibrate: skipped, $MACHINE"
else
timeout ${CALIBRATE_S:-200} weakscale calibrate --out /tmp/r5/device16.yaml --mpi-probe $(which weakscale-calibrate-mpi) \
  --note "the lent device machine's 16 CPU cores, an idle GPU beside them (stop 30)" > /tmp/r5/calibrate.log 2>&1
echo "calibrate: rc $? in $SECONDS s"; grep -A4 "^variability" /tmp/r5/device16.yaml
cp /tmp/r5/device16.yaml $OUT/ 2>/dev/null
fi
SECONDS=0
timeout ${VALIDATE_S:-300} weakscale validate --machine /tmp/r5/device16.yaml --out /tmp/r5/val --engine $ENGINE \
  --no-plot --ranks-max 16 --repeat ${REPEAT:-3} --runs ${RUNS:-r01 r21 r25 r28 r29 r32} > /tmp/r5/validate.log 2>&1
echo "validate: rc $? in $SECONDS s"; grep "^validate: " /tmp/r5/validate.log | tail -14
tar czf $OUT/run5.tgz -C /tmp r5
