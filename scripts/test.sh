#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test suite with CTest.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: ASan + UBSan build in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/build.sh "$@"

build_dir=build
[ "${1:-}" = "--sanitize" ] && build_dir=build-asan
# Open MPI refuses root without these; tests that start ranks run as whoever runs CI.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Slow unwinding on malloc: Open MPI has no frame pointers, and its finalize leaks are suppressed
# by library name only when the stack reaches it (cmake/sanitizers/openmpi_under_lsan.cpp).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
