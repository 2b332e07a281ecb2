#!/usr/bin/env bash
# README command 1: installs everything, builds, and runs the default weak-scaling study
# (Frontier, 512 -> 8,192 devices). Writes results/frontier-weak-scaling.{csv,json,png,svg},
# results/frontier-weak-scaling-{breakdown,candidates}.{png,svg} and the -candidates,
# -placement-routing and -sensitivity CSV tables (results/README.md explains them). 32 seeded samples
# of the machine file's uncertainty ranges give every point a 10th-90th percentile band beside the
# prediction from the file as written. Builds only the weakscale program (the tests are README
# command 2's); the study's tasks run on every core (`--jobs N` to limit them).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh --target weakscale
./build/cli/weakscale study benchmarks/studies/frontier-weak-scaling.yaml --samples 32 --out results/
