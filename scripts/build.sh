#!/usr/bin/env bash
# Configures and builds weakscale in build/ (or build-asan/ with --sanitize). Warnings are errors.
# Usage: scripts/build.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=build-asan
  extra=(-DWEAKSCALE_SANITIZE=ON -DWEAKSCALE_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi

cmake -S . -B "$build_dir" -DWEAKSCALE_WERROR=ON "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
