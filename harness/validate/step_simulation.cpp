#include "harness/validate/step_simulation.hpp"

#include "sim/step/simulated_step.hpp"

namespace ws {
namespace {

// The engine computes in fp32; its switches are the step options' own.
SimulatedStepConfig step_config(const ValidationRun& run) {
  SimulatedStepConfig c;
  c.model = run.model;
  c.layout = run.layout;
  c.sequences = run.sequences;
  static_cast<StepScheduleOptions&>(c.options) = run.schedule;
  c.options.precision = Precision::fp32;
  return c;
}

}  // namespace

StepSimulator make_step_simulator(const Machine& machine) {
  return [&machine](const ValidationRun& run, const std::optional<std::filesystem::path>& trace) {
    SimulatedStepConfig config = step_config(run);
    config.trace = trace.has_value();
    const SimulatedStep step = simulate_step(machine, config);
    if (trace) write_simulated_trace(step, trace->string());
    // Writers and the comparison with the engine work in seconds, keyed by the engine's names.
    PhaseTimes t{step.step.seconds(), step.compute.seconds(), {}, 0, {}};
    for (int g = 0; g < kStepGroups; ++g) {
      const auto group = static_cast<CommGroup>(g);
      t.exposed_comm_s[to_string(group)] = step.exposed(group).seconds();
      t.progress_s += step.progress(group).seconds();
    }
    for (int k = 0; k < kComputeKinds; ++k) {
      const auto kind = static_cast<ComputeKind>(k);
      if (step.compute_of(kind) > Time::zero()) t.compute_by_kind_s[to_string(kind)] = step.compute_of(kind).seconds();
    }
    return t;
  };
}

}  // namespace ws
