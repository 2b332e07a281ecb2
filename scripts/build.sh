#!/usr/bin/env bash
# Configures and builds weakscale in build/ (or build-asan/ with --sanitize). Warnings are errors.
# Usage: scripts/build.sh [--sanitize] [--target NAME]...   (default: every target, tests included;
# README command 1 builds only the programs it runs)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
extra=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize)
      build_dir=build-asan
      # -g1: line tables for the sanitizers' stack traces, without the full debug info that
      # makes compiling and linking the sanitizer build slower.
      extra=(-DWEAKSCALE_SANITIZE=ON -DWEAKSCALE_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG") ;;
    --target) targets+=(--target "$2"); shift ;;
    *) echo "build.sh: unknown argument '$1' (allowed: --sanitize, --target NAME)" >&2; exit 2 ;;
  esac
  shift
done

cmake -S . -B "$build_dir" -DWEAKSCALE_WERROR=ON "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
