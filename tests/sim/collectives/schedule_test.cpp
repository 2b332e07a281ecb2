// Schedule-based collectives: the executor against the ring driver, rhd against its closed form,
// byte conservation of every algorithm, hierarchical NIC use, selection thresholds, determinism.
#include <gtest/gtest.h>

#include <algorithm>

#include <bit>
#include <cmath>
#include <numeric>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/flow_schedule.hpp"
#include "sim/collectives/hierarchical_schedule.hpp"
#include "sim/collectives/rhd_schedule.hpp"
#include "tests/sim/collectives/ring_reference.hpp"
#include "sim/collectives/ring_schedule.hpp"
#include "sim/collectives/tree_schedule.hpp"
#include "sim/machine/machine_loader.hpp"
#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

using namespace ws::literals;

struct ScheduleFixture {
  Machine machine;
  Topology topology;
  FlowNetwork network;
  ScheduleFixture(Machine m, int nodes, int groups = 0)
      : machine(std::move(m)), topology(build_topology(machine, nodes, groups)), network(topology) {}
};

std::vector<int> schedule_devices(int first, int p, int stride = 1) {
  std::vector<int> d(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) d[static_cast<std::size_t>(i)] = first + i * stride;
  return d;
}

ScheduleResult run_one(ScheduleFixture& fx, const FlowSchedule& s) {
  const std::vector<FlowSchedule> all{s};
  return run_flow_schedules(fx.network, all, fx.machine.collective_libraries.front()).front();
}

// The executor runs the ring's schedule exactly as the dedicated ring driver does, contention and
// traffic half sprayed over Valiant paths included: same end times, same flows.
TEST(FlowSchedule, RingScheduleReproducesTheRingDriverExactly) {
  const Machine m = testing::small_machine(3, 4, 4, 2, 2, 1, 50.0, 25.0);
  ScheduleFixture a(m, 12), b(m, 12);
  std::vector<RingCall> calls;
  std::vector<FlowSchedule> schedules;
  for (int c = 0; c < 2; ++c) {
    const auto devices = schedule_devices(c, 12, 2);  // the two devices of each node in different calls
    const CollectiveOp op = c == 0 ? CollectiveOp::all_reduce : CollectiveOp::all_gather;
    calls.push_back({op, devices, 64_MiB + 3, Time::zero()});
    schedules.push_back(ring_schedule(op, devices, 64_MiB + 3, RingOptions{}));
    schedules.back().valiant_share = 0.5;
  }
  const auto ring = run_ring_collectives(a.network, calls, m.collective_libraries.front(), 0.5);
  const auto generic = run_flow_schedules(b.network, schedules, m.collective_libraries.front());
  for (std::size_t c = 0; c < calls.size(); ++c) {
    EXPECT_EQ(generic[c].end, ring[c].end) << c;
    EXPECT_EQ(generic[c].flows, ring[c].flows) << c;
  }
}

// A member's ring send waits for its receive of the step before and, from the ninth on, for its
// own send eight steps earlier (the library's buffer slots): it never runs further ahead.
TEST(RingSchedule, ASendWaitsForTheReceiveBeforeAndTheOwnSendEightStepsEarlier) {
  constexpr int kP = 12, kSlots = 8;
  const FlowSchedule s = ring_schedule(CollectiveOp::all_reduce, schedule_devices(0, kP), 64_MiB, RingOptions{});
  std::vector<std::vector<int>> sends_of(kP);  // each member's sends in step order
  for (std::size_t id = 0; id < s.size(); ++id) sends_of[static_cast<std::size_t>(s.send(static_cast<int>(id)).from)].push_back(static_cast<int>(id));
  for (int j = 0; j < kP; ++j) {
    const auto& own = sends_of[static_cast<std::size_t>(j)];
    ASSERT_EQ(own.size(), static_cast<std::size_t>(2 * (kP - 1)));
    for (std::size_t k = 1; k < own.size(); ++k) {
      const auto after = s.after(own[k]);
      const int from_predecessor = sends_of[static_cast<std::size_t>((j + kP - 1) % kP)][k - 1];
      EXPECT_NE(std::find(after.begin(), after.end(), from_predecessor), after.end()) << j << " step " << k;
      const bool waits_on_own = k >= kSlots && std::find(after.begin(), after.end(), own[k - kSlots]) != after.end();
      EXPECT_EQ(waits_on_own, k >= kSlots) << j << " step " << k;
      EXPECT_EQ(after.size(), k >= kSlots ? 2u : 1u) << j << " step " << k;
    }
  }
}

// One device per node and a fabric 10x the NIC: every rhd exchange runs at the NIC rate, so
// all-reduce = launch + 2 log2 p (step + hop latency) + 2 (p - 1) / p M / bw.
TEST(RhdCollective, AllReduceMatchesTheClosedFormOnANonBlockingNetwork) {
  for (const int p : {4, 8}) {
    ScheduleFixture fx(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), p);
    const CollectiveLibrary& lib = fx.machine.collective_libraries.front();
    const Bytes M = 256_MiB;
    const auto r = run_one(fx, rhd_schedule(CollectiveOp::all_reduce, schedule_devices(0, p), M));
    const Time hop = SprayedMessages(fx.network).route(0, 1).latency;
    const double log2p = std::log2(p);
    const double expected_s = lib.launch_latency.seconds() + 2 * log2p * (lib.step_latency + hop).seconds() +
                              2.0 * (p - 1) / p * static_cast<double>(M) / 25e9;
    EXPECT_NEAR(r.end.seconds(), expected_s, 0.01 * expected_s) << p;
    EXPECT_EQ(r.flows, static_cast<std::uint64_t>(2 * log2p * p));
  }
}

// Bytes each algorithm must move, from its definition (M divisible by everything used here).
Bytes closed_form_bytes(CollectiveAlgorithm a, CollectiveOp op, int p, Bytes M, int nodes, int local) {
  const auto P = static_cast<Bytes>(p);
  switch (a) {
    case CollectiveAlgorithm::ring: return (op == CollectiveOp::all_reduce ? 2 : 1) * (P - 1) * M;
    case CollectiveAlgorithm::tree: return 2 * (P - 1) * M;
    // Every member but the root sends the whole buffer up once; then the root's blocks go out.
    case CollectiveAlgorithm::binomial:
      return op == CollectiveOp::all_reduce ? 2 * (P - 1) * M : (P - 1) * M + (P - 1) * (M / P);
    case CollectiveAlgorithm::rhd: {
      Bytes q = 1;
      while (q * 2 <= P) q *= 2;
      const Bytes r = P - q;
      if (op == CollectiveOp::all_reduce) return 2 * r * M + 2 * (q - 1) * M;
      if (op == CollectiveOp::reduce_scatter) return r * M + (q - 1) * M + r * (M / P);
      return (P - 1) * M;
    }
    case CollectiveAlgorithm::hierarchical: {
      const auto n = static_cast<Bytes>(nodes), L = static_cast<Bytes>(local);
      if (op == CollectiveOp::all_reduce) return 2 * n * (L - 1) * M + 2 * (n - 1) * M;
      return n * (L - 1) * M + (n - 1) * M;
    }
  }
  return 0;
}

TEST(Collectives, EveryAlgorithmDeliversTheBytesOfItsClosedForm) {
  const Bytes M = 96_MiB;  // divisible by 4, 6, 8, 12
  for (const auto a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::rhd, CollectiveAlgorithm::tree,
                       CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::binomial}) {
    for (const auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
      if (!supports(a, op)) continue;
      for (const int nodes : {2, 3}) {
        // 4 devices per node with 4 NICs: hierarchical has n = nodes, L = 4.
        ScheduleFixture fx(testing::small_machine(1, 8, 8, 4, 4, 1), nodes);
        const int p = 4 * nodes;
        const auto s = build_schedule(a, op, schedule_devices(0, p), M, ScheduleOptions{4, 4, 0, {}});
        const auto r = run_one(fx, s);
        const Bytes expected = closed_form_bytes(a, op, p, M, nodes, 4);
        EXPECT_EQ(s.total_bytes(), expected) << to_string(a) << " " << to_string(op) << " p=" << p;
        EXPECT_EQ(r.bytes, expected);
        EXPECT_EQ(fx.network.bytes_delivered(), expected) << to_string(a) << " " << to_string(op);
      }
    }
  }
}

TEST(RhdCollective, NonPowerOfTwoAddsTwoStepsAndDeliversItsBytes) {
  ScheduleFixture fx(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), 6);
  const auto s = rhd_schedule(CollectiveOp::all_reduce, schedule_devices(0, 6), 60_MiB);
  EXPECT_EQ(s.critical_path_steps(), 2 * 2 + 2);  // 2 log2 4 + pre + post
  run_one(fx, s);
  EXPECT_EQ(fx.network.bytes_delivered(), closed_form_bytes(CollectiveAlgorithm::rhd, CollectiveOp::all_reduce, 6,
                                                            60_MiB, 6, 1));
}

// Open MPI's libnbc all-reduce on two members: the whole buffer one way, then back, in sequence:
// launch + 2 (step + hop + M / bw), twice the ring's M / bw. Reduce-scatter: M up, then M / 2 back.
TEST(BinomialCollective, TwoMembersMatchTheClosedForm) {
  ScheduleFixture fx(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), 2);
  const CollectiveLibrary& lib = fx.machine.collective_libraries.front();
  const Bytes M = 64_MiB;
  const Time hop = SprayedMessages(fx.network).route(0, 1).latency;
  const double step = (lib.step_latency + hop).seconds(), launch = lib.launch_latency.seconds();
  const auto all_reduce = run_one(fx, binomial_all_reduce_schedule(schedule_devices(0, 2), M));
  const double all_reduce_s = launch + 2 * (step + static_cast<double>(M) / 25e9);
  EXPECT_NEAR(all_reduce.end.seconds(), all_reduce_s, 0.01 * all_reduce_s);
  EXPECT_EQ(all_reduce.flows, 2u);
  ScheduleFixture fx2(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), 2);
  const auto reduce_scatter = run_one(fx2, binomial_reduce_scatter_schedule(schedule_devices(0, 2), M));
  const double reduce_scatter_s = launch + 2 * step + 1.5 * static_cast<double>(M) / 25e9;
  EXPECT_NEAR(reduce_scatter.end.seconds(), reduce_scatter_s, 0.01 * reduce_scatter_s);
}

TEST(BinomialCollective, IsChosenForOpenMpiReductionsOnly) {
  CollectiveLibrary open_mpi{"openmpi", {}, {}, 1.0, {}};
  EXPECT_EQ(select_algorithm(open_mpi, CollectiveOp::all_reduce, 64_MiB, 2, 2), CollectiveAlgorithm::binomial);
  EXPECT_EQ(select_algorithm(open_mpi, CollectiveOp::reduce_scatter, 1_MiB, 8, 8), CollectiveAlgorithm::binomial);
  EXPECT_EQ(select_algorithm(open_mpi, CollectiveOp::all_gather, 64_MiB, 2, 2), CollectiveAlgorithm::ring);
  CollectiveLibrary mpich{"cray-mpich", {}, {}, 1.0, {}};
  EXPECT_EQ(select_algorithm(mpich, CollectiveOp::all_reduce, 64_MiB, 2, 2), CollectiveAlgorithm::rhd);
  EXPECT_FALSE(supports(CollectiveAlgorithm::binomial, CollectiveOp::all_gather));
  EXPECT_EQ(parse_algorithm("binomial"), CollectiveAlgorithm::binomial);
}

// Up and down the binomial tree: its height is the most set bits of a position (<= ceil(log2 p)).
TEST(TreeCollective, TakesTwiceTheTreeHeightInSteps) {
  for (const int p : {2, 5, 8, 16}) {
    const auto s = tree_all_reduce_schedule(schedule_devices(0, p), 1_MiB);
    int height = 0;
    for (unsigned q = 0; q < static_cast<unsigned>(p); ++q) height = std::max(height, std::popcount(q));
    EXPECT_EQ(s.critical_path_steps(), 2 * height) << p;  // 1 MiB: one chunk per half
    const auto pipelined = tree_all_reduce_schedule(schedule_devices(0, p), 8 * kTreeChunkBytes);
    EXPECT_EQ(pipelined.critical_path_steps(), 2 * height + tree_chunks(4 * kTreeChunkBytes) - 1) << p;
    EXPECT_LE(height, static_cast<int>(std::ceil(std::log2(p))));
  }
}

// NCCL's tree on nodes of L members: a chunk climbs a chain of L - 1 hops in its node, the tree's
// levels, and comes back down, every hop of every chunk in flight at once, so the call takes
// 2 (L - 1) + 2 h + c - 1 steps (c chunks) where running the node's stages one after another
// would add each stage's steps of every chunk. Every local rank heads one channel, so every NIC
// carries data, and the bytes a node sends to other nodes are what its places in the two binomial
// trees send (one half-buffer up unless it is the root, one down per child): on two nodes, each
// byte once each way.
TEST(TreeCollective, OnNodesOfSeveralMembersChainsPipelineWithTheTrees) {
  const int L = 4;
  for (const int nodes : {2, 4}) {
    const auto devices = schedule_devices(0, nodes * L);
    const int height = nodes == 2 ? 1 : 2;  // binomial trees over 2 and 4 nodes
    const auto one = node_tree_all_reduce_schedule(devices, 2 * L * kTreeChunkBytes, L);
    EXPECT_EQ(one.critical_path_steps(), 2 * (L - 1) + 2 * height) << nodes;
    const Bytes bytes = 64_MiB;
    const int chunks = tree_chunks(bytes / L / 2);
    ASSERT_GT(chunks, 1);
    const auto s = node_tree_all_reduce_schedule(devices, bytes, L);
    EXPECT_EQ(s.critical_path_steps(), 2 * (L - 1) + 2 * height + chunks - 1) << nodes;
    std::vector<Bytes> out_of_node(static_cast<std::size_t>(nodes), 0), into_node(static_cast<std::size_t>(nodes), 0);
    for (int i = 0; i < static_cast<int>(s.size()); ++i) {
      const ScheduledSend& send = s.send(i);
      const int from = devices[static_cast<std::size_t>(send.from)] / L;
      const int to = devices[static_cast<std::size_t>(send.to)] / L;
      if (from == to) continue;
      out_of_node[static_cast<std::size_t>(from)] += send.bytes;
      into_node[static_cast<std::size_t>(to)] += send.bytes;
    }
    for (int n = 0; n < nodes; ++n) {
      // Node n is position n of the first tree and position nodes - 1 - n of the mirrored one.
      int halves = 0;
      for (const int q : {n, nodes - 1 - n}) {
        halves += q == 0 ? 0 : 1;
        for (int c = q + 1; c < nodes; ++c) halves += (c & (c - 1)) == q ? 1 : 0;
      }
      EXPECT_EQ(out_of_node[static_cast<std::size_t>(n)], bytes / 2 * static_cast<Bytes>(halves)) << nodes << " " << n;
      EXPECT_EQ(into_node[static_cast<std::size_t>(n)], out_of_node[static_cast<std::size_t>(n)]) << nodes << " " << n;
      if (nodes == 2) {
        EXPECT_EQ(out_of_node[static_cast<std::size_t>(n)], bytes);
      }
    }
    ScheduleFixture fx(testing::small_machine(1, 8, 8, 4, 4, 1), nodes);
    run_one(fx, s);
    for (int nic = 0; nic < nodes * 4; ++nic)
      EXPECT_GT(fx.network.link_bytes_delivered(fx.topology.injection_up[static_cast<std::size_t>(nic)]), 0.0) << nic;
  }
}

// The chains overlap the trees: on two nodes whose NICs (4 x 25 GB/s) are slower than the node's
// links (100 GB/s per pair), the call takes the NICs' time for each node's bytes / L per NIC plus
// the pipeline's fill, not the chains' time on top (running the node's reduce-scatter, the trees
// and the all-gather one after another took 1.78x the NICs' time here; now 1.17x).
TEST(TreeCollective, OnNodesOfSeveralMembersTakesTheNicsTimeNotTheChainsOnTop) {
  const int nodes = 2, L = 4;
  const Bytes bytes = 256_MiB;
  ScheduleFixture fx(testing::small_machine(1, 8, 8, L, 4, 1), nodes);
  const auto result = run_one(fx, node_tree_all_reduce_schedule(schedule_devices(0, nodes * L), bytes, L));
  const double nics = static_cast<double>(bytes) / L / 25e9;
  EXPECT_GT(result.end.seconds(), nics);
  EXPECT_LT(result.end.seconds(), 1.25 * nics);
}

// Each local rank drives its own NIC in the inter-node phase; a single ring leaves a node through
// one device only.
TEST(HierarchicalCollective, UsesEveryNicOfEveryNode) {
  const int nodes = 4;
  auto nic_bytes = [&](const FlowSchedule& s, ScheduleFixture& fx) {
    run_one(fx, s);
    std::vector<double> out;
    for (int nic = 0; nic < nodes * 4; ++nic) {
      out.push_back(fx.network.link_bytes_delivered(fx.topology.injection_up[static_cast<std::size_t>(nic)]));
    }
    return out;
  };
  for (const auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    ScheduleFixture h(testing::small_machine(1, 8, 8, 4, 4, 1), nodes);
    for (const double b : nic_bytes(hierarchical_schedule(op, schedule_devices(0, 16), 64_MiB, 4), h)) {
      EXPECT_GT(b, 0.0) << to_string(op);
    }
  }
  ScheduleFixture single(testing::small_machine(1, 8, 8, 4, 4, 1), nodes);
  const auto ring = nic_bytes(ring_schedule(CollectiveOp::all_gather, schedule_devices(0, 16), 64_MiB, RingOptions{4, 1, 0, {}}), single);
  EXPECT_EQ(std::count_if(ring.begin(), ring.end(), [](double b) { return b > 0; }), nodes);
  ScheduleFixture multi(testing::small_machine(1, 8, 8, 4, 4, 1), nodes);
  const auto channels = nic_bytes(ring_schedule(CollectiveOp::all_gather, schedule_devices(0, 16), 64_MiB, RingOptions{4, 4, 0, {}}), multi);
  EXPECT_EQ(std::count_if(channels.begin(), channels.end(), [](double b) { return b > 0; }), 4 * nodes);
}

// Coalesced ring segments keep a lockstep ring's time: only the (hidden) per-step bandwidth terms
// merge, the latencies are added back.
TEST(RingSchedule, SegmentBytesAreTheSumOfTheirStepsChunks) {
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    for (const int p : {2, 3, 7, 16}) {
      for (const Bytes total : {Bytes{1}, Bytes{5}, Bytes{1000003}, Bytes{1} << 40}) {
        const int steps = op == CollectiveOp::all_reduce ? 2 * (p - 1) : p - 1;
        for (int member = 0; member < p; ++member) {
          for (int first = 0; first < steps; ++first) {
            Bytes sum = 0;
            for (int end = first + 1; end <= steps; ++end) {
              sum += ring_chunk_bytes(op, total, p, member, end - 1);
              ASSERT_EQ(ring_segment_bytes(op, total, p, member, first, end), sum)
                  << to_string(op) << " p " << p << " total " << total << " member " << member << " [" << first
                  << ", " << end << ")";
            }
          }
        }
      }
    }
  }
}

TEST(RingSchedule, SegmentsMatchTheStepwiseRingInLockstep) {
  const int p = 8;
  ScheduleFixture a(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), p);
  ScheduleFixture b(testing::small_machine(1, 8, 8, 1, 1, 1, 250.0, 250.0), p);
  const auto exact = run_one(a, ring_schedule(CollectiveOp::all_reduce, schedule_devices(0, p), 64_MiB, RingOptions{}));
  const auto merged = run_one(b, ring_schedule(CollectiveOp::all_reduce, schedule_devices(0, p), 64_MiB, RingOptions{1, 1, 3, {}}));
  EXPECT_EQ(merged.flows, 3u * p);
  EXPECT_NEAR(merged.end.seconds(), exact.end.seconds(), 1e-3 * exact.end.seconds());
  EXPECT_EQ(a.network.bytes_delivered(), b.network.bytes_delivered());
}

TEST(AlgorithmSelection, PicksTheDocumentedAlgorithmAtTheThresholds) {
  const CollectiveLibrary nccl{"nccl", 10_us, 2_us, 1.0}, rccl{"rccl", 10_us, 2_us, 1.0};
  const CollectiveLibrary mpich{"cray-mpich", 10_us, 2_us, 1.0};
  EXPECT_EQ(nccl_tree_threshold(2), 4_MiB);
  EXPECT_EQ(nccl_tree_threshold(32), 256_MiB);
  EXPECT_EQ(nccl_tree_threshold(33), 0u);
  EXPECT_EQ(nccl_tree_threshold(1), 0u);
  for (const auto& lib : {nccl, rccl}) {
    EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_reduce, 4_MiB - 1, 8, 2), CollectiveAlgorithm::tree);
    EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_reduce, 4_MiB, 8, 2), CollectiveAlgorithm::ring);
    EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_reduce, 256_MiB - 1, 128, 32), CollectiveAlgorithm::tree);
    EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_reduce, 1, 256, 64), CollectiveAlgorithm::ring);
    EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_gather, 1, 8, 2), CollectiveAlgorithm::ring);
    EXPECT_EQ(select_algorithm(lib, CollectiveOp::reduce_scatter, 1, 8, 2), CollectiveAlgorithm::ring);
  }
  for (const auto op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
    EXPECT_EQ(select_algorithm(mpich, op, kMpichLongMessageBytes - 1, 8, 2), CollectiveAlgorithm::rhd);
    EXPECT_EQ(select_algorithm(mpich, op, kMpichLongMessageBytes, 8, 2), CollectiveAlgorithm::ring);
  }
  EXPECT_EQ(select_algorithm(mpich, CollectiveOp::all_reduce, 1_GiB, 8, 2), CollectiveAlgorithm::rhd);
}

TEST(AlgorithmSelection, UsesTheMachineFileTreeThresholds) {
  CollectiveLibrary lib{"nccl", 10_us, 2_us, 1.0};
  lib.tree_thresholds = {{2, 1_MiB}, {8, 64_MiB}};
  EXPECT_EQ(nccl_tree_threshold(lib, 1), 0u);
  EXPECT_EQ(nccl_tree_threshold(lib, 2), 1_MiB);
  EXPECT_EQ(nccl_tree_threshold(lib, 4), 8_MiB);  // log-log halfway: sqrt(1 x 64) MiB
  EXPECT_EQ(nccl_tree_threshold(lib, 8), 64_MiB);
  EXPECT_EQ(nccl_tree_threshold(lib, 9), 0u);
  EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_reduce, 8_MiB - 1, 16, 4), CollectiveAlgorithm::tree);
  EXPECT_EQ(select_algorithm(lib, CollectiveOp::all_reduce, 8_MiB, 16, 4), CollectiveAlgorithm::ring);
  const Machine alps = load_machine(std::string(WEAKSCALE_SOURCE_DIR) + "/machines/alps.yaml");
  ASSERT_EQ(alps.collective_libraries.front().tree_thresholds.size(), 2u);
  EXPECT_EQ(nccl_tree_threshold(alps.collective_libraries.front(), 2), 4_MiB);
  EXPECT_EQ(nccl_tree_threshold(alps.collective_libraries.front(), 32), 256_MiB);
}

}  // namespace
}  // namespace ws
