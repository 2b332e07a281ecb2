#!/bin/bash
# On the device, second call: validate a few multi-rank runs once each, with traces, on the file calibrated in the first.
cd .dev16 && tar xJf bundle.tar.xz && cd ..
. .dev16/env.sh
export PMIX_MCA_pcompress_base_silence_warning=1
ENGINE=$(which weakscale-engine)
for part in "a r21 r25" "b r29" "c r32"; do
  set -- $part; name=$1; shift
  mkdir -p /tmp/val_$name
  SECONDS=0
  timeout ${PART_S:-80} weakscale validate --machine .dev16/device16.yaml --out /tmp/val_$name --engine $ENGINE \
    --no-plot --ranks-max 16 --repeat 1 --traces /tmp/val_$name/traces --runs "$@" > /tmp/val_$name/validate.log 2>&1
  echo "part $name: rc $? in $SECONDS s"; grep "^validate: r" /tmp/val_$name/validate.log
  tar czf $OUT/val_$name.tgz -C /tmp val_$name
done
