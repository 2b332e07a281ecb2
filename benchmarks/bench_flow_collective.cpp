// The issue-14 figure for the flow model: a 1 GiB all-reduce over every data-parallel group of a
// Frontier layout (devices/8) x 2 x 2 x 2 at once, priced by the flow model (sim/pricing: every
// communicator of the kind as shaped flows on one FlowNetwork, ring steps merged into phases) on
// machines/frontier.yaml. The job network (placement, topology, routed programs) is built inside
// the timed loop: the figure is a cold call. Target: 8,192 devices < 1 s wall on one core.
// Run: build/benchmarks/bench_flow_collective (counters: simulated time, data groups, members).
#include <benchmark/benchmark.h>

#include "sim/machine/machine_loader.hpp"
#include "sim/pricing/flow_pricing.hpp"

namespace {

using namespace ws::literals;

void BM_FlowDataParallelAllReduce(benchmark::State& state) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  const int devices = static_cast<int>(state.range(0));
  const ws::Layout layout{devices / 8, 2, 2, 2};
  double simulated_s = 0;
  for (auto _ : state) {
    ws::JobNetwork network(machine, devices);
    ws::Simulation kernel;
    ws::FlowPricing pricing(network, layout, kernel);
    const int id = pricing.issue(ws::Time::zero(), {ws::CommGroup::data, ws::CollectiveOp::all_reduce, 1_GiB});
    simulated_s = pricing.finish(id).seconds();
    benchmark::ClobberMemory();
  }
  state.counters["simulated_s"] = simulated_s;
  state.counters["data_groups"] = 8;
  state.counters["members"] = layout.data;
}
BENCHMARK(BM_FlowDataParallelAllReduce)
    ->RangeMultiplier(2)
    ->Range(512, 32768)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
