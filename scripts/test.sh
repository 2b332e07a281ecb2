#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs the whole test suite with CTest.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: ASan + UBSan build in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# The tests and the programs they start; the benchmarks are built by `bash scripts/build.sh` (and CI).
bash scripts/build.sh --no-benchmarks "$@"

build_dir=build
[ "${1:-}" = "--sanitize" ] && build_dir=build-asan
# Open MPI refuses root without these; tests that start ranks run as whoever runs CI.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Programs that start MPI unwind slowly on malloc by their own default, so that Open MPI's finalize
# leaks (no frame pointers) can be suppressed by library name (cmake/sanitizers/openmpi_under_lsan.cpp).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# The sanitizer pass skips the "heavy" tests: larger runs of code that smaller tests cover under
# the sanitizers too (tests/CMakeLists.txt); the release pass runs every test.
skip=()
[ "$build_dir" = build-asan ] && skip=(-LE heavy)
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "${skip[@]}"
