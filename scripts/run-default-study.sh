#!/usr/bin/env bash
# README command 1: installs everything, builds, and runs the default weak-scaling study
# (Frontier, 512 -> 8,192 devices). Writes results/frontier-weak-scaling.{csv,json,png,svg}
# and results/frontier-weak-scaling-breakdown.{png,svg}.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
./build/sim/cli/weakscale study benchmarks/studies/frontier-weak-scaling.yaml --out results/
