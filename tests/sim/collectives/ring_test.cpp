// Ring collectives against their closed forms, conservation, isolation and determinism.
#include "tests/sim/collectives/ring_reference.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "sim/net/placement.hpp"
#include "sim/net/sprayed_messages.hpp"
#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

using namespace ws::literals;

struct Fixture {
  Machine machine;
  Topology topology;
  FlowNetwork network;
  Fixture(Machine m, int nodes) : machine(std::move(m)), topology(build_topology(machine, nodes)), network(topology) {}
};

std::vector<int> iota_devices(int first, int p) {
  std::vector<int> d(static_cast<std::size_t>(p));
  std::iota(d.begin(), d.end(), first);
  return d;
}

// One device per node, fabric 10x the NIC rate: the ring is limited only by the 25 GB/s NICs.
TEST(RingCollective, AllReduceMatchesTheClosedFormOnANonBlockingNetwork) {
  const int p = 8;
  Fixture fx(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), p);
  const CollectiveLibrary& lib = fx.machine.collective_libraries.front();
  const Bytes M = 256_MiB;
  const std::vector<RingCall> calls{{CollectiveOp::all_reduce, iota_devices(0, p), M, Time::zero()}};
  const auto r = run_ring_collectives(fx.network, calls, lib);
  ASSERT_EQ(r.size(), 1u);
  const Time hop = SprayedMessages(fx.network).route(0, 1).latency;
  const int steps = 2 * (p - 1);
  const double expected_s = lib.launch_latency.seconds() + steps * (lib.step_latency + hop).seconds() +
                            2.0 * (p - 1) / p * static_cast<double>(M) / 25e9;
  EXPECT_NEAR(r[0].end.seconds(), expected_s, 0.01 * expected_s);
  EXPECT_EQ(r[0].flows, static_cast<std::uint64_t>(steps * p));
  // Conservation: every member sends 2(p-1) chunks of M/p.
  EXPECT_EQ(fx.network.bytes_delivered(), static_cast<Bytes>(steps) * M);
}

TEST(RingCollective, ReduceScatterAndAllGatherTakeHalfTheSteps) {
  const int p = 6;
  for (const CollectiveOp op : {CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    Fixture fx(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), p);
    const CollectiveLibrary& lib = fx.machine.collective_libraries.front();
    const Bytes M = 96_MiB + 5;  // not divisible by p: chunks differ by one byte
    const std::vector<RingCall> calls{{op, iota_devices(0, p), M, Time::zero()}};
    const auto r = run_ring_collectives(fx.network, calls, lib);
    const double bw_s = (p - 1.0) / p * static_cast<double>(M) / 25e9;
    EXPECT_GT(r[0].end.seconds(), bw_s);
    EXPECT_NEAR(r[0].end.seconds(), bw_s, 0.01 * bw_s + 100e-6);
    EXPECT_EQ(fx.network.bytes_delivered(), static_cast<Bytes>(p - 1) * M);
  }
}

TEST(RingCollective, SingleMemberCostsOnlyTheLaunch) {
  Fixture fx(testing::small_machine(1, 2, 2, 1, 1, 1), 2);
  const std::vector<RingCall> calls{{CollectiveOp::all_reduce, {0}, 1_MiB, 3_us}};
  const auto r = run_ring_collectives(fx.network, calls, fx.machine.collective_libraries.front());
  EXPECT_EQ(r[0].end, 3_us + fx.machine.collective_libraries.front().launch_latency);
  EXPECT_EQ(r[0].flows, 0u);
}

TEST(RingCollective, DisjointRingsDoNotSlowEachOther) {
  const int p = 4;
  const Machine m = testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0);
  const CollectiveLibrary lib = m.collective_libraries.front();
  Fixture alone(m, 8);
  const std::vector<RingCall> one{{CollectiveOp::all_reduce, iota_devices(0, p), 64_MiB, Time::zero()}};
  const auto r1 = run_ring_collectives(alone.network, one, lib);
  Fixture both(m, 8);
  const std::vector<RingCall> two{{CollectiveOp::all_reduce, iota_devices(0, p), 64_MiB, Time::zero()},
                                        {CollectiveOp::all_reduce, iota_devices(4, p), 64_MiB, Time::zero()}};
  const auto r2 = run_ring_collectives(both.network, two, lib);
  EXPECT_NEAR(r2[0].end.seconds(), r1[0].end.seconds(), 1e-3 * r1[0].end.seconds());
  EXPECT_NEAR(r2[1].end.seconds(), r1[0].end.seconds(), 1e-3 * r1[0].end.seconds());
}

TEST(RingCollective, RingsSharingAThinGlobalLinkAreSlowerThanAlone) {
  // Two rings that each span two groups joined by one 25 GB/s global link per pair.
  const Machine m = testing::small_machine(2, 4, 4, 1, 1, 1, 250.0, 25.0);
  const CollectiveLibrary lib = m.collective_libraries.front();
  Fixture alone(m, 8);
  const std::vector<RingCall> one{{CollectiveOp::all_reduce, {0, 1, 4, 5}, 64_MiB, Time::zero()}};
  const double t1 = run_ring_collectives(alone.network, one, lib)[0].end.seconds();
  Fixture both(m, 8);
  const std::vector<RingCall> two{{CollectiveOp::all_reduce, {0, 1, 4, 5}, 64_MiB, Time::zero()},
                                        {CollectiveOp::all_reduce, {2, 3, 6, 7}, 64_MiB, Time::zero()}};
  const auto r2 = run_ring_collectives(both.network, two, lib);
  EXPECT_GT(r2[0].end.seconds(), 1.5 * t1);
  EXPECT_GT(r2[1].end.seconds(), 1.5 * t1);
}

std::pair<std::uint64_t, std::int64_t> ring_run(std::uint64_t seed) {
  Fixture fx(testing::small_machine(4, 4, 4, 2, 2, 1, 50.0, 25.0), 16);
  const auto nodes = place_job_nodes(16, 12, NodeAllocation::scattered, seed);
  const auto devices = devices_of_ranks(nodes, 2, 24);
  std::vector<RingCall> calls;
  for (int g = 0; g < 2; ++g) {  // two "data-parallel" groups with stride 2
    std::vector<int> members;
    for (int r = g; r < 24; r += 2) members.push_back(devices[static_cast<std::size_t>(r)]);
    calls.push_back({CollectiveOp::all_reduce, members, 8_MiB, Time::zero()});
  }
  const auto r = run_ring_collectives(fx.network, calls, fx.machine.collective_libraries.front(), 0.5);
  return {fx.network.trace_hash(), r[0].end.ps() ^ r[1].end.ps()};
}

TEST(RingCollective, SameSeedGivesIdenticalFlowTrace) {
  EXPECT_EQ(ring_run(3), ring_run(3));
}

}  // namespace
}  // namespace ws
