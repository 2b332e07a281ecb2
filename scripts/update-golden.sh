#!/usr/bin/env bash
# Regenerates the golden files in tests/golden/ (one per line of tests/golden/cases.txt) with the
# real `weakscale` binary. Run it after a deliberate change to the model, a machine file or an
# output format, then review the diff (git diff tests/golden) and commit it with the change that
# caused it.
# Usage: scripts/update-golden.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build}
cmake --build "$build_dir" --target weakscale >/dev/null
weakscale=$(realpath "$build_dir/cli/weakscale")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while IFS='|' read -r name output arguments; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  dir="$tmp/$name.d"
  mkdir -p "$dir"
  read -r -a args <<<"${arguments//@DIR@/$dir}"
  output=${output//@DIR@/$dir}
  if ! "$weakscale" "${args[@]}" >"$dir/stdout" 2>"$dir/stderr"; then
    cat "$dir/stderr" >&2
    echo "update-golden: weakscale ${args[*]} failed" >&2
    exit 1
  fi
  [[ "$output" == stdout ]] && output="$dir/stdout"
  cp "$output" "tests/golden/$name"
  echo "update-golden: wrote tests/golden/$name" >&2
done <tests/golden/cases.txt
