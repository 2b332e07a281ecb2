#!/bin/bash
# On the device, one call (stop 28): recalibrate the 16 cores with `calibrate`'s variability section
# (device_speed_spread, compute_noise, added in stop 27; cores meeting at a barrier since 924e9a7), then
# validate the runs stop 27 measured there (RUNS: others of the matrix),
# once each, on that file. Outputs are tarred: the device tool returns few files.
cd .dev16 && tar xJf bundle.tar.xz && cd ..
. .dev16/env.sh
export PMIX_MCA_pcompress_base_silence_warning=1
ENGINE=$(which weakscale-engine)
mkdir -p /tmp/r3/val
nproc > /tmp/r3/host.txt; lscpu >> /tmp/r3/host.txt
SECONDS=0
timeout ${CALIBRATE_S:-300} weakscale calibrate --out /tmp/r3/device16.yaml --mpi-probe $(which weakscale-calibrate-mpi) \
  --note "the lent device machine's 16 CPU cores, an idle GPU beside them (stop 28)" > /tmp/r3/calibrate.log 2>&1
echo "calibrate: rc $? in $SECONDS s"; grep -A4 "^variability" /tmp/r3/device16.yaml
cp /tmp/r3/device16.yaml $OUT/ 2>/dev/null
SECONDS=0
timeout ${VALIDATE_S:-220} weakscale validate --machine /tmp/r3/device16.yaml --out /tmp/r3/val --engine $ENGINE \
  --no-plot --ranks-max 16 --repeat 1 --runs ${RUNS:-r01 r21 r22 r23 r24 r25 r29 r32} > /tmp/r3/validate.log 2>&1
echo "validate: rc $? in $SECONDS s"; grep "^validate: " /tmp/r3/validate.log | tail -14
tar czf $OUT/run3.tgz -C /tmp r3
