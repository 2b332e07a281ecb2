// The simulator side of a validation run: the same configuration as the engine run, simulated by
// sim/step on the calibrated machine.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>

#include "sim/machine/machine.hpp"
#include "harness/validate/phase_times.hpp"
#include "harness/validate/validation_run.hpp"

namespace ws {

// Simulates a run; with a trace path it also writes the simulated timeline there (Perfetto JSON
// with the engine's event names, to load next to the engine's trace).
using StepSimulator =
    std::function<PhaseTimes(const ValidationRun&, const std::optional<std::filesystem::path>& trace)>;

// A simulator bound to `machine`, which must outlive it.
StepSimulator make_step_simulator(const Machine& machine);

}  // namespace ws
