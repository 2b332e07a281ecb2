#!/usr/bin/env bash
# Coverage-guided fuzzing of every input format with libFuzzer + ASan + UBSan (clang, Debian's
# clang and libclang-rt-dev packages): builds tests/fuzz's targets in build-fuzz/ and runs each
# for SECONDS (default 60), one target per core at a time, starting from the seed corpus tests/fuzz/corpus/<target>/ and the
# regressions tests/fuzz/regressions/<target>/. New coverage is kept in build-fuzz/corpus/; a
# crash, leak, UB or timeout (> 10 s for one input) stops that target, its input is left in
# build-fuzz/artifacts/<target>/, and the script exits 1 after the other targets ran: copy the
# input into tests/fuzz/regressions/<target>/ and fix the bug (CTest replays it from then on).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]    (targets: the fuzz_*.cpp names without fuzz_)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(quantity machine_yaml study_spec published_csv benchmark_output measured_csv checkpoint text_tokens engine_args weakscale_args machine_plan)

bash scripts/install-deps.sh
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEAKSCALE_FUZZ=ON \
  -DWEAKSCALE_BUILD_TESTS=OFF -DWEAKSCALE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_targets

# One target: its summary line into build-fuzz/fuzz-<target>.result.
fuzz_one() {
  local t=$1 program=build-fuzz/tests/fuzz/fuzz_$1
  # Absolute paths: a target may change its working directory, and libFuzzer writes new inputs late.
  local corpus=$PWD/build-fuzz/corpus/$t artifacts=$PWD/build-fuzz/artifacts/$t/ log=build-fuzz/fuzz-$t.log result
  mkdir -p "$corpus" "$artifacts" "tests/fuzz/regressions/$t"
  echo "fuzz: $t for ${seconds}s" >&2
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$program" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts" \
      "$corpus" "$PWD/tests/fuzz/corpus/$t" "$PWD/tests/fuzz/regressions/$t" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log and $artifacts)"
  fi
  local runs cov ft
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  printf '%-14s %10s executions  %6s edges  %7s features  %s\n' "$t" "$runs" "$cov" "$ft" "$result" \
    >"build-fuzz/fuzz-$t.result"
}

for t in "${targets[@]}"; do
  [ -x "build-fuzz/tests/fuzz/fuzz_$t" ] || { echo "fuzz: no target '$t' (tests/fuzz/fuzz_$t.cpp)" >&2; exit 2; }
  rm -f "build-fuzz/fuzz-$t.result"
done
# One target per core at a time (each libFuzzer process is single-threaded).
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  if [ -f "build-fuzz/fuzz-$t.result" ]; then cat "build-fuzz/fuzz-$t.result"; else echo "$t: no result"; fi
  grep -q ' ok$' "build-fuzz/fuzz-$t.result" 2>/dev/null || status=1
done
exit $status
