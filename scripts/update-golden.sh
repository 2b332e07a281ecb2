#!/usr/bin/env bash
# Regenerates the end-to-end golden files in tests/golden/ with the real `weakscale` binary.
# Run it after a deliberate change to the model, a machine file or the CSV format, then review
# the diff (git diff tests/golden) and commit it with the change that caused it.
# Usage: scripts/update-golden.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build}
cmake --build "$build_dir" --target weakscale >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for study in perlmutter-small; do
  "$build_dir/sim/cli/weakscale" study "benchmarks/studies/$study.yaml" --out "$tmp" --no-plot >/dev/null
  cp "$tmp/$study.csv" "tests/golden/$study.csv"
  echo "update-golden: wrote tests/golden/$study.csv" >&2
done
