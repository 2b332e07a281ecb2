#!/usr/bin/env bash
# The full property sweep of the simulator (issue 43): every machine file x every job size 1-64 and
# 255, 1,000 and 4,096 devices x every op x every algorithm x both placements through the collective
# model, and a small step on the flow network per job size; no crash, finite times, NIC bytes
# conserved. CI runs a lighter cut of the same test (tests/sim/property). About 3-4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
WEAKSCALE_SWEEP=full ./build/tests/sim/property/test_property_sweep "$@"
