// Time to simulate one training step with the step simulator (sim/step/) on Frontier
// (machines/frontier.yaml): every point of the Frontier 32,768-GCD study (benchmarks/studies) at the
// layout the study chose, GPT 5B on 512 GCDs to 175B on 32,768, one 2,048-token sequence per GCD,
// bf16, recomputation, OAR / ORS / OAG on; collectives on the flow network (every call in flight
// sharing links) or in closed form (each alone). The job network (placement, topology, routed
// programs) is built inside the timed loop: the figure is a cold step. Counter peak_rss_mib is the
// process's peak so far (the points run smallest first, so it shows how memory grows).
// Reproduce: cmake --build <build> --target bench_step_sim && /usr/bin/time -v
// <build>/benchmarks/bench_step_sim
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <string>

#include "workload/model.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"

namespace {

struct Point {
  const char* model;
  ws::Layout layout;
};

// state.range(0): the point (0 = 5B on 512 GCDs ... 6 = 175B on 32,768); state.range(1): 1 flow, 0 closed form.
void BM_SimulateStep(benchmark::State& state) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  // The layouts results/frontier-weak-scaling-32k.csv chose (ef361e2).
  const Point points[] = {{"5B", ws::Layout{4, 1, 2, 64}},     {"10B", ws::Layout{8, 1, 2, 64}},
                          {"20B", ws::Layout{32, 1, 1, 64}},   {"40B", ws::Layout{16, 1, 2, 128}},
                          {"80B", ws::Layout{32, 1, 2, 128}},  {"160B", ws::Layout{64, 1, 2, 128}},
                          {"175B", ws::Layout{64, 1, 2, 256}}};
  const Point& point = points[state.range(0)];
  ws::SimulatedStepConfig config;
  config.model = *ws::find_model(point.model);
  config.layout = point.layout;
  config.sequences = point.layout.devices();
  config.collectives = state.range(1) != 0 ? ws::CollectiveModel::flow : ws::CollectiveModel::closed_form;
  double step_s = 0;
  for (auto _ : state) {
    const ws::SimulatedStep step = ws::simulate_step(machine, config);
    step_s = step.step.seconds();
    benchmark::ClobberMemory();  // DoNotOptimize on a double garbles it with some GCC versions
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.SetLabel(std::string(point.model) + " on " + std::to_string(config.layout.devices()) + " GCDs, " +
                 ws::to_string(config.collectives) + ", simulated step " + std::to_string(step_s) + " s");
}

BENCHMARK(BM_SimulateStep)->ArgsProduct({{0, 1, 2, 3, 4, 5, 6}, {1, 0}})->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

// A pipelined step of Llama 3 70B on Frontier (issue 44's target): pp = 8 stages, vpp = 5 chunks,
// mb = 64 micro-batches of one 8,192-token sequence, Gy = 8 (a node's GCDs) and the rest data
// parallel, on the flow network. state.range(0): devices (8,192 or 32,768); state.range(1):
// micro-batches (how wall time grows with them).
void BM_SimulatePipelineStep(benchmark::State& state) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  const int devices = static_cast<int>(state.range(0)), micro_batches = static_cast<int>(state.range(1));
  ws::SimulatedStepConfig config;
  config.model = *ws::find_model("llama3-70b");
  config.layout = ws::Layout{devices / 64, 1, 8, 1, 8, 5, micro_batches};
  config.sequences = static_cast<long long>(config.layout.data) * micro_batches;
  config.collectives = ws::CollectiveModel::flow;
  double step_s = 0;
  for (auto _ : state) {
    const ws::SimulatedStep step = ws::simulate_step(machine, config);
    step_s = step.step.seconds();
    benchmark::ClobberMemory();
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.SetLabel(ws::to_string(config.layout) + " on " + std::to_string(devices) + " GCDs, simulated step " +
                 std::to_string(step_s) + " s");
}

BENCHMARK(BM_SimulatePipelineStep)
    ->Args({8192, 16})
    ->Args({8192, 32})
    ->Args({8192, 64})
    ->Args({32768, 64})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
