// Structure of the built dragonfly, placement, and route shapes.
#include "sim/net/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "sim/net/placement.hpp"
#include "sim/net/traffic.hpp"
#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

TEST(Topology, BuildsOnlyTheGroupsTheNodesNeed) {
  const Machine m = testing::small_machine(8, 4, 8, 2, 2, 2);
  const Topology t = build_topology(m, 10);
  EXPECT_EQ(t.groups, 2);
  EXPECT_EQ(t.devices(), 20);
  EXPECT_EQ(boost::num_edges(t.graph), t.links.size());
  EXPECT_EQ(boost::num_vertices(t.graph), static_cast<std::size_t>(20 + 20 + 8));
  // Per node: 2 directed intra links; per NIC: 4; per group: 4*3 local; per pair: 2*2 global.
  EXPECT_EQ(t.links.size(), static_cast<std::size_t>(10 * 2 + 20 * 4 + 2 * 12 + 4));
}

TEST(Topology, NodeNicsSitOnDifferentSwitchesOfTheirGroup) {
  const Machine m = testing::small_machine(3, 4, 6, 4, 4, 1);
  const Topology t = build_topology(m, 18);
  for (int n = 0; n < t.nodes; ++n) {
    std::set<int> switches;
    for (int k = 0; k < t.nics_per_node; ++k) {
      const int sw = t.switch_of_nic[static_cast<std::size_t>(n * t.nics_per_node + k)];
      EXPECT_EQ(t.group_of_switch(sw), t.group_of_node(n));
      switches.insert(sw);
    }
    EXPECT_EQ(switches.size(), 4u);
  }
}

TEST(Topology, GlobalLinksJoinEveryGroupPairBothWays) {
  const Machine m = testing::small_machine(4, 4, 2, 1, 1, 3);
  const Topology t = build_topology(m, 8);
  for (int g = 0; g < 4; ++g) {
    for (int h = 0; h < 4; ++h) {
      if (g == h) continue;
      for (int k = 0; k < 3; ++k) {
        const Link& fwd = t.links[static_cast<std::size_t>(t.global_link(g, h, k))];
        const Link& back = t.links[static_cast<std::size_t>(t.global_link(h, g, k))];
        EXPECT_EQ(fwd.kind, LinkKind::global);
        EXPECT_EQ(t.group_of_switch(fwd.from - t.switch_vertex(0)), g);
        EXPECT_EQ(t.group_of_switch(fwd.to - t.switch_vertex(0)), h);
        EXPECT_EQ(fwd.from, back.to);
        EXPECT_EQ(fwd.to, back.from);
      }
    }
  }
}

TEST(Topology, RejectsMoreNodesThanTheMachineHas) {
  const Machine m = testing::small_machine(2, 2, 2, 1, 1, 1);
  EXPECT_THROW(build_topology(m, 5), std::invalid_argument);
}

TEST(Placement, ContiguousTakesTheFirstNodes) {
  EXPECT_EQ(place_job_nodes(10, 3, NodeAllocation::contiguous, 1), (std::vector<int>{0, 1, 2}));
}

TEST(Placement, ScatteredIsSeededDistinctAndSorted) {
  const auto a = place_job_nodes(100, 10, NodeAllocation::scattered, 5);
  EXPECT_EQ(a, place_job_nodes(100, 10, NodeAllocation::scattered, 5));
  EXPECT_NE(a, place_job_nodes(100, 10, NodeAllocation::scattered, 6));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 10u);
}

TEST(Placement, RanksFillNodesInOrder) {
  const std::vector<int> nodes{3, 7};
  EXPECT_EQ(devices_of_ranks(nodes, 4, 6), (std::vector<int>{12, 13, 14, 15, 28, 29}));
  // Fewer ranks per node than devices: each node's first devices (srun --gpus-per-node).
  EXPECT_EQ(devices_of_ranks(nodes, 4, 2, 1), (std::vector<int>{12, 28}));
  EXPECT_THROW(devices_of_ranks(nodes, 4, 3, 1), std::invalid_argument);  // 3 ranks, 2 nodes of 1
  EXPECT_EQ(devices_of_ranks(nodes, 4, 4, 2), (std::vector<int>{12, 13, 28, 29}));
  EXPECT_THROW(devices_of_ranks(nodes, 4, 4, 5), std::invalid_argument);
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

TEST(Topology, DevicesWithoutANicBorrowTheirWidestNeighbours) {
  // Frontier-like: NIC k on device 2k; the sibling 2k+1 is joined to 2k by the widest link.
  Machine m = testing::small_machine(1, 4, 2, 8, 4, 1);
  m.node.links.clear();
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      m.node.links.push_back({a, b, Bandwidth::from_gbps(b == a + 1 && a % 2 == 0 ? 200 : 50), Time::from_ns(250)});
    }
  }
  for (int k = 0; k < 4; ++k) m.node.nics[static_cast<std::size_t>(k)].attached_device = 2 * k;
  const Topology t = build_topology(m, 2);
  for (int d = 0; d < 8; ++d) EXPECT_EQ(t.nic_of_device[static_cast<std::size_t>(d)], d / 2) << d;
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// A chain 0-1-...-7 inside the node: every pair has a route, of |a - b| hops, through the devices
// between them, and the traffic router loads exactly those links (before, pairs more than two hops
// apart had none, and Release builds wrote outside the path).
TEST(Topology, IntraNodeRoutesOfAnyLengthFollowTheFewestHops) {
  Machine m = testing::small_machine(1, 4, 2, 8, 4, 1);
  m.node.links.clear();
  for (int a = 0; a + 1 < 8; ++a) m.node.links.push_back({a, a + 1, Bandwidth::from_gbps(100), Time::from_ns(250)});
  const Topology t = build_topology(m, 2);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      const auto route = t.intra_route(a, b);
      ASSERT_EQ(route.size(), static_cast<std::size_t>(std::abs(a - b))) << a << "->" << b;
      int from = a;
      for (const int to : route) {
        EXPECT_EQ(std::abs(to - from), 1);
        EXPECT_GE(t.intra_node_link(1, from, to), 0);
        from = to;
      }
      if (a != b) {
        EXPECT_EQ(route.back(), b);
      }
    }
  }
  TrafficRouter router(t);
  const TrafficDemand demand{8 + 0, 8 + 7, 1.0};
  const TrafficLoads loads = router.route({&demand, 1});
  EXPECT_EQ(loads.fixed.size(), 7U);
  EXPECT_TRUE(loads.minimal.empty());
  for (const LinkShare& s : loads.fixed) EXPECT_EQ(t.links[static_cast<std::size_t>(s.link)].kind, LinkKind::intra_node);
}

// Among routes of equal length the widest wins: 0 -> 3 through 1 (100 GB/s) or 2 (50 GB/s).
TEST(Topology, IntraNodeRoutesOfEqualLengthTakeTheWidest) {
  Machine m = testing::small_machine(1, 4, 2, 4, 4, 1);
  m.node.links = {{0, 2, Bandwidth::from_gbps(50), Time::from_ns(250)},
                  {2, 3, Bandwidth::from_gbps(400), Time::from_ns(250)},
                  {0, 1, Bandwidth::from_gbps(100), Time::from_ns(250)},
                  {1, 3, Bandwidth::from_gbps(100), Time::from_ns(250)}};
  const Topology t = build_topology(m, 1);
  const auto route = t.intra_route(0, 3);
  ASSERT_EQ(route.size(), 2U);
  EXPECT_EQ(route[0], 1);
  EXPECT_EQ(t.intra_route(3, 0)[0], 1);
}

}  // namespace
}  // namespace ws
