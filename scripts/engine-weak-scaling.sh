#!/usr/bin/env bash
# Weak scaling of the engine from 1 to 2 ranks: the same model with the global batch doubled, on
# every 2-rank layout (2x1x1x1 data parallel, 1x2x1x1 X, 1x1x2x1 Y, 1x1x1x2 Z), 10 steps each,
# the last 8 averaged; one CSV row per run and the efficiency t(1 rank) / t(2 ranks) per layout.
# Usage: scripts/engine-weak-scaling.sh [OUT.csv] [extra engine flags...]
# Needs build/engine/weakscale-engine. One OpenBLAS thread per rank (one rank = one core).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-engine-weak-scaling.csv}
shift || true
engine=build/engine/weakscale-engine
model=(--layers 4 --hidden 512 --heads 8 --seq 256 --vocab 8192 --steps 10)
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -f "$out"
mpiexec -n 1 "$engine" "${model[@]}" --layout 1x1x1x1 --batch 4 --csv "$out" "$@" | grep '"summary"'
for layout in 2x1x1x1 1x2x1x1 1x1x2x1 1x1x1x2; do
  mpiexec -n 2 --oversubscribe "$engine" "${model[@]}" --layout "$layout" --batch 8 --csv "$out" "$@" | grep '"summary"'
done
# step_s is column 11.
awk -F, 'NR == 2 { t1 = $11 } NR > 2 { printf "%s: step %.3f s vs %.3f s on 1 rank, weak-scaling efficiency %.2f\n", $1, $11, t1, t1 / $11 }' "$out"
