#!/usr/bin/env bash
# Configures and builds weakscale in build/ (or build-asan/ with --sanitize). Warnings are errors.
# Usage: scripts/build.sh [--sanitize] [--no-benchmarks] [--target NAME]...   (default: every target,
# tests and benchmarks included; README command 1 builds only the programs it runs, command 2 all
# but the benchmarks)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
extra=()
targets=()
benchmarks=ON
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize)
      build_dir=build-asan
      # -g1: line tables for the sanitizers' stack traces, without the full debug info that
      # makes compiling and linking the sanitizer build slower.
      extra=(-DWEAKSCALE_SANITIZE=ON -DWEAKSCALE_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG") ;;
    --no-benchmarks) benchmarks=OFF ;;
    --target) targets+=(--target "$2"); shift ;;
    *) echo "build.sh: unknown argument '$1' (allowed: --sanitize, --no-benchmarks, --target NAME)" >&2; exit 2 ;;
  esac
  shift
done

[ "$build_dir" = build ] && extra+=(-DWEAKSCALE_BUILD_BENCHMARKS=$benchmarks)
# Ninja for a new build directory: it starts a target's sources before the libraries it links are
# built, which keeps both cores busy where make waits (a directory configured before keeps its
# generator, which CMake cannot change).
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then extra+=(-G Ninja); fi
cmake -S . -B "$build_dir" -DWEAKSCALE_WERROR=ON "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
