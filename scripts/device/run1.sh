#!/bin/bash
# On the device: unpack the bundle, calibrate the host, validate the engine against the simulator.
cd .dev16 && tar xJf bundle.tar.xz && cd ..
. .dev16/env.sh
nproc > $OUT/host.txt; lscpu >> $OUT/host.txt; free -g >> $OUT/host.txt; df -h /dev/shm >> $OUT/host.txt
ENGINE=$(which weakscale-engine)
if ! timeout 60 mpirun -np 16 $ENGINE --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1024 --batch 32 --steps 2 --warmup 1 --layout 2x1x2x4 > $OUT/smoke.txt 2>&1; then
  echo "vader failed; TCP instead"; tail -5 $OUT/smoke.txt
  export OMPI_MCA_btl=self,tcp
  timeout 60 mpirun -np 16 $ENGINE --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1024 --batch 32 --steps 2 --warmup 1 --layout 2x1x2x4 > $OUT/smoke.txt 2>&1 || { tail -20 $OUT/smoke.txt; exit 3; }
fi
tail -2 $OUT/smoke.txt | cut -c1-300
mkdir -p $OUT/val
time timeout 150 weakscale calibrate --out $OUT/device16.yaml --mpi-probe $(which weakscale-calibrate-mpi) \
  --note "the lent device machine's 16 CPU cores, an idle GPU beside them" > $OUT/calibrate.log 2>&1
tail -25 $OUT/calibrate.log
time timeout ${VALIDATE_S:-240} weakscale validate --machine $OUT/device16.yaml --out $OUT/val --engine $ENGINE \
  --no-plot --ranks-max 16 --runs r01 r21 r22 r23 r24 r25 r26 r27 r28 r29 r30 r31 r32 > $OUT/validate.log 2>&1
tail -45 $OUT/validate.log
ls -la $OUT/val
