// Simulated 1 GiB ring all-reduce across all data-parallel groups of a Frontier-like layout at
// once (issue 3 performance figure: target < 1 s wall for 8,192 devices on one core).
// Run: build/benchmarks/bench_collective --benchmark_filter='BM_DataParallelAllReduce/8192/16/0/1/1'
// (args: devices / tensor-parallel / routing / segments, 0 = stepwise / paths per member; counters:
// network events, network flows, member flows, solves, simulated time). sim/net/README.md has the table.
// The machine is built in code, Frontier-shaped (../shared/docs/machines.md): 8 GCDs and 4 NICs of
// 25 GB/s per node, 128 nodes and 32 switches per group, 4 global links per group pair, 350 ns switches.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/schedule/layout.hpp"
#include "sim/collectives/ring.hpp"
#include "sim/net/placement.hpp"

namespace {

using namespace ws::literals;

ws::Machine frontier_like() {
  ws::Machine m;
  m.name = "frontier-like";
  m.nodes = 74 * 128;
  m.node.devices = 8;
  // Approximate xGMI map: the two GCDs of an OAM share 200 GB/s, every other pair 50 GB/s.
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) m.node.links.push_back({a, b, (b == a + 1 && a % 2 == 0) ? 200_GBps : 50_GBps, 250_ns});
  }
  for (int k = 0; k < 4; ++k) m.node.nics.push_back({2 * k, 25_GBps, 1000_ns});
  ws::DragonflySpec& n = m.network;
  n.groups = 74;
  n.switches_per_group = 32;
  n.nodes_per_group = 128;
  n.ports_per_switch = 64;
  n.endpoints_per_switch = 16;
  n.global_ports_per_switch = 16;
  n.global_links_per_group_pair = 4;
  n.endpoint_link_bandwidth = 25_GBps;
  n.local_link_bandwidth = 25_GBps;
  n.global_link_bandwidth = 25_GBps;
  n.endpoint_link_latency = 50_ns;
  n.local_link_latency = 50_ns;
  n.global_link_latency = 500_ns;
  n.switch_latency = 350_ns;
  m.collective_libraries.push_back({"rccl-like", 10_us, 2_us, 1.0});
  return m;
}

// state.range(0): devices; state.range(1): tensor-parallel size (x*y*z), data = devices / tp;
// state.range(2): routing policy (0 minimal, 1 non-minimal, 2 adaptive);
// state.range(3): ring model (0 stepwise: one flow per member per step; n >= 1: coalesced into n
// lockstep flow groups per call, see ring_coalesced.hpp); state.range(4): coalesced paths per member.
void BM_DataParallelAllReduce(benchmark::State& state) {
  const ws::Machine machine = frontier_like();
  const int devices = static_cast<int>(state.range(0));
  const int tp = static_cast<int>(state.range(1));
  const auto policy = static_cast<ws::RoutingPolicy>(state.range(2));
  const ws::Layout layout{devices / tp, 2, 2, tp / 4};
  const int nodes = devices / machine.node.devices;
  const auto job = ws::place_job_nodes(nodes, nodes, ws::NodeAllocation::contiguous, 1);
  const auto rank_device = ws::devices_of_ranks(job, machine.node.devices, devices);
  std::vector<ws::RingCall> calls;
  const int stride = ws::group_stride(layout, ws::GroupKind::data);
  for (int first = 0; first < stride; ++first) {
    ws::RingCall c{ws::CollectiveOp::all_reduce, {}, 1_GiB, ws::Time::zero()};
    for (int i = 0; i < layout.data; ++i) c.devices.push_back(rank_device[static_cast<std::size_t>(first + i * stride)]);
    calls.push_back(std::move(c));
  }
  ws::FlowNetworkStats stats;
  double simulated_s = 0;
  std::uint64_t member_flows = 0;
  for (auto _ : state) {
    const ws::Topology topology = ws::build_topology(machine, nodes);
    ws::Router router(topology, {policy, 1});
    ws::FlowNetwork network(topology, router);
    const auto& library = machine.collective_libraries.front();
    const auto results = ws::run_ring_collectives(network, calls, library);
    simulated_s = 0;
    member_flows = 0;
    for (const auto& r : results) {
      simulated_s = std::max(simulated_s, r.end.seconds());
      member_flows += r.flows;
    }
    stats = network.stats();
  }
  state.counters["flows"] = static_cast<double>(stats.flows_completed);
  state.counters["member_flows"] = static_cast<double>(member_flows);
  state.counters["events"] = static_cast<double>(stats.events);
  state.counters["solves"] = static_cast<double>(stats.recomputes);
  state.counters["flows_resolved"] = static_cast<double>(stats.flows_resolved);
  state.counters["wide_solves"] = static_cast<double>(stats.wide_solves);
  state.counters["simulated_s"] = simulated_s;
  state.counters["dp_groups"] = static_cast<double>(calls.size());
}
BENCHMARK(BM_DataParallelAllReduce)
    // Stepwise rings (one flow per member per step): the reference model; flows grow as
    // devices x 2(p - 1), and desynchronized rings need about one solve per flow.
    ->ArgsProduct({{256, 512, 1024, 2048, 4096, 8192}, {16}, {0}, {0}, {1}})
    ->ArgsProduct({{256, 512, 1024}, {16}, {2}, {0}, {1}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
