#!/usr/bin/env bash
# The full sweeps that CI runs a lighter cut of (WEAKSCALE_SWEEP=full):
# - the property sweep of the simulator (issue 43): every machine file x every job size 1-64 and
#   255, 1,000 and 4,096 devices x every op x every algorithm x both placements through the
#   collective model, and a small step on the flow network per job size; no crash, finite times,
#   NIC bytes conserved (about 3-4 minutes);
# - the every-step reference at scale: 1 GiB ring all-gather and all-reduce over 2,048 and 8,192
#   ranks of a uniform dragonfly against the merged phases, within 1 % (tests/sim/pricing).
# Arguments go to the property sweep's test program (e.g. --gtest_filter=...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
WEAKSCALE_SWEEP=full ./build/tests/sim/property/test_property_sweep "$@"
time WEAKSCALE_SWEEP=full ./build/tests/sim/pricing/test_pricing --gtest_filter='FlowModel.EveryStepRingsMatchThePhasesOnUniformDragonfliesAtScale'
