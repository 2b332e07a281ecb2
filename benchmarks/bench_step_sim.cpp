// Time to simulate one training step with the step simulator (sim/step/) on Frontier
// (machines/frontier.yaml): the Frontier studies' largest points (benchmarks/studies), GPT 80B on
// 8,192 GCDs (layout 128 x 1 x 2 x 32) and GPT 175B on 32,768 GCDs (256 x 1 x 2 x 64), one 2,048-token
// sequence per GCD, bf16, recomputation, OAR / ORS / OAG on; collectives on the flow network (every
// call in flight sharing links) or in closed form (each alone). The job network (placement,
// topology, routed programs) is built inside the timed loop: the figure is a cold step.
// Reproduce: cmake --build <build> --target bench_step_sim && /usr/bin/time -v
// <build>/benchmarks/bench_step_sim
#include <benchmark/benchmark.h>

#include <string>

#include "engine/schedule/model.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"

namespace {

struct Point {
  const char* model;
  ws::Layout layout;
};

// state.range(0): 0 = 80B on 8,192 GCDs, 1 = 175B on 32,768 GCDs; state.range(1): 1 flow, 0 closed form.
void BM_SimulateStep(benchmark::State& state) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  const Point points[] = {{"80B", ws::Layout{128, 1, 2, 32}}, {"175B", ws::Layout{256, 1, 2, 64}}};
  const Point& point = points[state.range(0)];
  ws::SimulatedStepConfig config;
  config.model = *ws::find_model(point.model);
  config.layout = point.layout;
  config.sequences = point.layout.devices();
  config.collectives = state.range(1) != 0 ? ws::CollectiveModel::flow : ws::CollectiveModel::closed_form;
  double step_s = 0;
  for (auto _ : state) {
    const ws::SimulatedStep step = ws::simulate_step(machine, config);
    step_s = step.step_s;
    benchmark::ClobberMemory();  // DoNotOptimize on a double garbles it with some GCC versions
  }
  state.SetLabel(std::string(point.model) + " on " + std::to_string(config.layout.devices()) + " GCDs, " +
                 ws::to_string(config.collectives) + ", simulated step " + std::to_string(step_s) + " s");
}

BENCHMARK(BM_SimulateStep)->ArgsProduct({{0, 1}, {1, 0}})->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
