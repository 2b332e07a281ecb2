// Time to simulate one training step with the step simulator (sim/step/): GPT 60B (56 layers,
// hidden 9216) on 8,192 devices of Frontier (machines/frontier.yaml), layout 128 x 8 x 2 x 4
// (Gdata x Gx x Gy x Gz), 2,048 sequences per step, bf16, recomputation, every overlap on; with
// and without keeping the per-task trace events.
// Reproduce: cmake --build <build> --target bench_step_sim && /usr/bin/time -v
// <build>/benchmarks/bench_step_sim
#include <benchmark/benchmark.h>

#include <string>

#include "engine/schedule/model.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"

namespace {

void BM_SimulateStep(benchmark::State& state) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  ws::SimulatedStepConfig config;
  config.model = *ws::find_model("60B");
  config.layout = ws::Layout{128, 8, 2, 4};
  config.sequences = 2048;
  config.options.overlap_data_parallel = true;
  config.trace = state.range(0) != 0;
  double step_s = 0;
  std::size_t events = 0;
  for (auto _ : state) {
    const ws::SimulatedStep step = ws::simulate_step(machine, config);
    step_s = step.step_s;
    events = step.events.size();
    benchmark::ClobberMemory();  // DoNotOptimize on a double garbles it with some GCC versions
  }
  state.SetLabel(std::to_string(config.layout.devices()) + " devices, simulated step " +
                 std::to_string(step_s) + " s, " + std::to_string(events) + " trace events");
}

BENCHMARK(BM_SimulateStep)->ArgName("trace")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
