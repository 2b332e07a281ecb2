#!/bin/bash
# On the device, after run3.sh (stop 28): validate a few runs again on the file run3.sh calibrated
# (copied to .dev16/device16-run3.yaml), with binaries whose host tracker also re-measures
# busy_node_compute before each configuration and after each run.
cd .dev16 && tar xJf bundle.tar.xz && cd ..
. .dev16/env.sh
export PMIX_MCA_pcompress_base_silence_warning=1
mkdir -p /tmp/r4/val
SECONDS=0
timeout ${VALIDATE_S:-150} weakscale validate --machine .dev16/device16-run3.yaml --out /tmp/r4/val \
  --engine $(which weakscale-engine) --no-plot --ranks-max 16 --repeat 1 --runs ${RUNS:-r21 r25 r29 r32} > /tmp/r4/validate.log 2>&1
echo "validate: rc $? in $SECONDS s"; grep -E "^validate: (r[0-9]+ |host|[0-9]+ runs|on the)" /tmp/r4/validate.log
tar czf $OUT/run4.tgz -C /tmp r4
