// Coalesced rings against the stepwise ring and its closed form, conservation and isolation.
#include "sim/collectives/ring_coalesced.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

using namespace ws::literals;

struct Fixture {
  Machine machine;
  Topology topology;
  Router router;
  FlowNetwork network;
  Fixture(Machine m, int nodes, RoutingPolicy policy)
      : machine(std::move(m)), topology(build_topology(machine, nodes)), router(topology, {policy, 1}), network(topology, router) {}
};

std::vector<int> iota_devices(int first, int p) {
  std::vector<int> d(static_cast<std::size_t>(p));
  std::iota(d.begin(), d.end(), first);
  return d;
}

// One device per node, fabric 10x the NIC rate: a lockstep ring, where coalescing is exact.
TEST(RingCoalesced, MatchesTheStepwiseRingAndItsClosedFormInLockstep) {
  const int p = 8;
  const Machine m = testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0);
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    const Bytes M = 256_MiB + 3;  // not divisible by p
    const std::vector<CollectiveCall> calls{{op, iota_devices(0, p), M, 5_us}};
    Fixture stepwise(m, p, RoutingPolicy::minimal);
    const auto r0 = run_ring_collectives(stepwise.network, calls, m.collective_libraries.front());
    Fixture coalesced(m, p, RoutingPolicy::minimal);
    const auto r1 = run_ring_collectives_coalesced(coalesced.network, calls, m.collective_libraries.front());
    ASSERT_EQ(r1.size(), 1u);
    EXPECT_EQ(r1[0].start, 5_us);
    EXPECT_NEAR(r1[0].end.seconds(), r0[0].end.seconds(), 1e-4 * r0[0].end.seconds()) << to_string(op);
    EXPECT_EQ(coalesced.network.bytes_delivered(), stepwise.network.bytes_delivered()) << to_string(op);
    EXPECT_EQ(r1[0].flows, static_cast<std::uint64_t>(p));
    const int steps = ring_steps(op, p);
    const Time hop = coalesced.network.path_latency(coalesced.router.route(0, 1, coalesced.network.link_load()));
    const auto& lib = m.collective_libraries.front();
    const double expected_s = 5e-6 + lib.launch_latency.seconds() + steps * (lib.step_latency + hop).seconds() +
                              steps * static_cast<double>(M) / p / 25e9;
    EXPECT_NEAR(r1[0].end.seconds(), expected_s, 1e-4 * expected_s) << to_string(op);
  }
}

TEST(RingCoalesced, SingleMemberCostsOnlyTheLaunch) {
  Fixture fx(testing::small_machine(1, 2, 2, 1, 1, 1), 2, RoutingPolicy::minimal);
  const std::vector<CollectiveCall> calls{{CollectiveOp::all_reduce, {0}, 1_MiB, 3_us}};
  const auto r = run_ring_collectives_coalesced(fx.network, calls, fx.machine.collective_libraries.front());
  EXPECT_EQ(r[0].end, 3_us + fx.machine.collective_libraries.front().launch_latency);
  EXPECT_EQ(r[0].flows, 0u);
}

TEST(RingCoalesced, RingsSharingAThinGlobalLinkMatchTheStepwiseRings) {
  // Two rings across two groups joined by one 25 GB/s global link: both halve their share.
  const Machine m = testing::small_machine(2, 4, 4, 1, 1, 1, 250.0, 25.0);
  const std::vector<CollectiveCall> two{{CollectiveOp::all_reduce, {0, 1, 4, 5}, 64_MiB, Time::zero()},
                                        {CollectiveOp::all_reduce, {2, 3, 6, 7}, 64_MiB, 1_us}};
  Fixture stepwise(m, 8, RoutingPolicy::minimal);
  const auto r0 = run_ring_collectives(stepwise.network, two, m.collective_libraries.front());
  Fixture coalesced(m, 8, RoutingPolicy::minimal);
  const auto r1 = run_ring_collectives_coalesced(coalesced.network, two, m.collective_libraries.front());
  for (std::size_t c = 0; c < 2; ++c) EXPECT_NEAR(r1[c].end.seconds(), r0[c].end.seconds(), 0.01 * r0[c].end.seconds());
  EXPECT_EQ(coalesced.network.bytes_delivered(), stepwise.network.bytes_delivered());
}

TEST(RingCoalesced, DisjointRingsDoNotSlowEachOther) {
  const Machine m = testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0);
  Fixture alone(m, 8, RoutingPolicy::minimal);
  const std::vector<CollectiveCall> one{{CollectiveOp::all_reduce, iota_devices(0, 4), 64_MiB, Time::zero()}};
  const auto r1 = run_ring_collectives_coalesced(alone.network, one, m.collective_libraries.front());
  Fixture both(m, 8, RoutingPolicy::minimal);
  const std::vector<CollectiveCall> two{{CollectiveOp::all_reduce, iota_devices(0, 4), 64_MiB, Time::zero()},
                                        {CollectiveOp::all_reduce, iota_devices(4, 4), 64_MiB, Time::zero()}};
  const auto r2 = run_ring_collectives_coalesced(both.network, two, m.collective_libraries.front());
  EXPECT_EQ(r2[0].end, r1[0].end);
  EXPECT_EQ(r2[1].end, r1[0].end);
}

}  // namespace
}  // namespace ws
