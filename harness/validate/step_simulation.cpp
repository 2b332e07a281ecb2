#include "harness/validate/step_simulation.hpp"

#include "sim/step/simulated_step.hpp"

namespace ws {
namespace {

// The engine computes in fp32; its overlap switches map one to one onto the step options.
SimulatedStepConfig step_config(const ValidationRun& run) {
  SimulatedStepConfig c;
  c.model = run.model;
  c.layout = run.layout;
  c.sequences = run.sequences;
  c.options.precision = Precision::fp32;
  c.options.recompute = run.recompute;
  c.options.overlap_all_reduce = run.overlap.all_reduce;
  c.options.overlap_reduce_scatter = run.overlap.reduce_scatter;
  c.options.overlap_all_gather = run.overlap.all_gather;
  c.options.overlap_data_parallel = run.overlap.data_parallel;
  return c;
}

}  // namespace

StepSimulator make_step_simulator(const Machine& machine) {
  return [&machine](const ValidationRun& run, const std::optional<std::filesystem::path>& trace) {
    SimulatedStepConfig config = step_config(run);
    config.trace = trace.has_value();
    const SimulatedStep step = simulate_step(machine, config);
    if (trace) write_simulated_trace(step, trace->string());
    PhaseTimes t{step.step_s, step.compute_s, step.exposed_comm_s, 0, step.compute_by_kind_s};
    for (const auto& [group, seconds] : step.progress_comm_s) t.progress_s += seconds;
    return t;
  };
}

}  // namespace ws
