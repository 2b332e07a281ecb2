// The simulator side of a validation run: the same configuration as the engine run, simulated by
// sim/step on the calibrated machine.
#pragma once

#include <functional>

#include "sim/machine/machine.hpp"
#include "sim/validate/phase_times.hpp"
#include "sim/validate/validation_run.hpp"

namespace ws {

using StepSimulator = std::function<PhaseTimes(const ValidationRun&)>;

// A simulator bound to `machine`, which must outlive it.
StepSimulator make_step_simulator(const Machine& machine);

}  // namespace ws
