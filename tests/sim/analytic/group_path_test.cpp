#include "sim/analytic/group_path.hpp"

#include <gtest/gtest.h>

#include <string>

#include "fake_machine.hpp"

namespace ws {
namespace {

using namespace ws::literals;
using ws::testing::fake_machine;

TEST(GroupPath, SingleRankIsLocal) {
  const GroupPath g = group_path(fake_machine(), Layout{4, 1, 2, 1}, GroupKind::x);
  EXPECT_EQ(g.ranks, 1);
  EXPECT_EQ(std::string(g.where), "local");
  EXPECT_EQ(collective_time(CollectiveOp::all_reduce, g, 1e9), Time::zero());
}

TEST(GroupPath, IntraNodeUniformNodeGetsTheLinkBandwidth) {
  const Machine m = fake_machine();
  for (const Layout& layout : {Layout{1, 4, 1, 1}, Layout{1, 2, 2, 1}, Layout{2, 1, 4, 1}}) {
    for (GroupKind kind : {GroupKind::x, GroupKind::y}) {
      const GroupPath g = group_path(m, layout, kind);
      if (g.ranks == 1) continue;
      EXPECT_EQ(std::string(g.where), "intra-node") << to_string(layout);
      EXPECT_DOUBLE_EQ(g.bandwidth.gbps(), 100.0) << to_string(layout);
      EXPECT_EQ(g.step_latency, 1_us + 1_us);  // link + library step
    }
  }
}

TEST(GroupPath, WidestPathWhenNoDirectLink) {
  Machine m = fake_machine();
  // A ring 0-1-2-3-0 only: 0 -> 2 takes two links.
  m.node.links = {
      {0, 1, 100_GBps, 1_us}, {1, 2, 100_GBps, 1_us}, {2, 3, 100_GBps, 1_us}, {3, 0, 100_GBps, 1_us}};
  const IntraNodeRoutes routes = route_intra_node(m.node);
  EXPECT_EQ(routes.route[0 * 4 + 2].size(), 2u);
  EXPECT_EQ(routes.route[0 * 4 + 1].size(), 1u);
  const GroupPath g = group_path(m, routes, Layout{1, 2, 2, 1}, GroupKind::y);  // rings {0,2}, {1,3}
  EXPECT_EQ(std::string(g.where), "intra-node");
  EXPECT_GT(g.bandwidth.gbps(), 0.0);
  EXPECT_LE(g.bandwidth.gbps(), 100.0);
  EXPECT_EQ(g.step_latency, 2_us + 1_us);
}

TEST(GroupPath, ConcurrentRingsShareALink) {
  Machine m = fake_machine();
  // A line 0-1-2-3: the Y rings {0,2} and {1,3} both route 0->2 and 1->3 over the link 1->2.
  m.node.links = {{0, 1, 100_GBps, 1_us}, {1, 2, 100_GBps, 1_us}, {2, 3, 100_GBps, 1_us}};
  const GroupPath g = group_path(m, Layout{1, 2, 2, 1}, GroupKind::y);
  EXPECT_DOUBLE_EQ(g.bandwidth.gbps(), 50.0);
  EXPECT_EQ(g.step_latency, 2_us + 1_us);
  EXPECT_DOUBLE_EQ(group_path(m, Layout{1, 2, 2, 1}, GroupKind::x).bandwidth.gbps(), 100.0);
}

TEST(GroupPath, InterNodeSharesTheNics) {
  // Data groups at stride 4 = devices per node: all 4 ranks of a node send off-node at once over
  // 2 x 25 GB/s of NICs.
  const GroupPath g = group_path(fake_machine(), Layout{2, 4, 1, 1}, GroupKind::data);
  EXPECT_EQ(std::string(g.where), "inter-node");
  EXPECT_DOUBLE_EQ(g.bandwidth.gbps(), 50.0 / 4.0);
  // Both nodes hang off one switch set (4 endpoints per switch): NIC 2 us + 2 endpoint links
  // 100 ns + 1 switch 350 ns + library 1 us.
  EXPECT_EQ(g.step_latency, 2_us + 200_ns + 350_ns + 1_us);
  EXPECT_EQ(g.launch_latency, 5_us);
}

TEST(GroupPath, LatencyGrowsWithSwitchHops) {
  Machine m = fake_machine();
  m.network.endpoints_per_switch = 1;  // one node per switch set: 2 switches + a local link
  EXPECT_EQ(group_path(m, Layout{2, 4, 1, 1}, GroupKind::data).step_latency,
            2_us + 200_ns + 2 * 350_ns + 100_ns + 1_us);
  // Across dragonfly groups: 3 switches + a local and a global link.
  EXPECT_EQ(group_path(m, Layout{4, 4, 1, 1}, GroupKind::data).step_latency,
            2_us + 200_ns + 3 * 350_ns + 100_ns + 500_ns + 1_us);
}

TEST(GroupPath, OneRingCrossingANodeGetsAllNics) {
  // One X ring of 8 ranks over 2 nodes: one rank per node sends off-node.
  const GroupPath g = group_path(fake_machine(), Layout{1, 8, 1, 1}, GroupKind::x);
  EXPECT_EQ(std::string(g.where), "inter-node");
  EXPECT_DOUBLE_EQ(g.bandwidth.gbps(), 50.0);
}

TEST(GroupPath, InterGroupSharesTheGlobalLinks) {
  // 16 ranks, dragonfly groups of 2 nodes = 8 ranks; data rings at stride 4 leave a group through
  // 4 ranks at once over 1 global link of 25 GB/s with minimal routing.
  Machine m = fake_machine();
  m.network.routing = RoutingPolicy::minimal;
  const GroupPath g = group_path(m, Layout{4, 4, 1, 1}, GroupKind::data);
  EXPECT_EQ(std::string(g.where), "inter-group");
  EXPECT_DOUBLE_EQ(g.bandwidth.gbps(), 25.0 / 4.0);
}

TEST(GroupPath, ValiantSpreadsOverEveryGlobalLinkOfTheGroup) {
  // 4 groups: each group has 3 global links; 4 flows leave it, each using 2 global hops:
  // 3 * 25 / (2 * 4) GB/s per rank.
  Machine m = fake_machine();
  m.network.routing = RoutingPolicy::non_minimal;
  EXPECT_DOUBLE_EQ(group_path(m, Layout{4, 4, 1, 1}, GroupKind::data).bandwidth.gbps(), 75.0 / 8.0);
}

TEST(GroupPath, AdaptiveIsNeverSlowerThanMinimalOrValiant) {
  for (int nodes : {4, 8, 16}) {
    Machine m = fake_machine(nodes);
    const Layout layout{nodes, 4, 1, 1};
    m.network.routing = RoutingPolicy::minimal;
    const double minimal = group_path(m, layout, GroupKind::data).bandwidth.gbps();
    m.network.routing = RoutingPolicy::non_minimal;
    const double valiant = group_path(m, layout, GroupKind::data).bandwidth.gbps();
    m.network.routing = RoutingPolicy::adaptive;
    const double adaptive = group_path(m, layout, GroupKind::data).bandwidth.gbps();
    EXPECT_GE(adaptive, minimal) << nodes;
    EXPECT_GE(adaptive, valiant) << nodes;
  }
}

TEST(GroupPath, LibraryEfficiencyScalesBandwidth) {
  Machine m = fake_machine();
  m.collective_libraries.front().bandwidth_efficiency = 0.5;
  EXPECT_DOUBLE_EQ(group_path(m, Layout{1, 4, 1, 1}, GroupKind::x).bandwidth.gbps(), 50.0);
}

TEST(GroupPath, MoreNicBandwidthNeverSlower) {
  const Machine base = fake_machine();
  Machine faster = base;
  for (auto& nic : faster.node.nics) nic.bandwidth = nic.bandwidth * 2.0;
  for (const Layout& layout : {Layout{2, 4, 1, 1}, Layout{4, 4, 1, 1}, Layout{1, 3, 1, 8}, Layout{2, 2, 2, 8},
                               Layout{1, 8, 1, 1}, Layout{8, 1, 1, 4}}) {
    for (GroupKind kind : {GroupKind::x, GroupKind::y, GroupKind::z, GroupKind::data}) {
      const GroupPath a = group_path(base, layout, kind);
      const GroupPath b = group_path(faster, layout, kind);
      if (a.ranks == 1) continue;
      EXPECT_GE(b.bandwidth.bytes_per_s(), a.bandwidth.bytes_per_s()) << to_string(layout) << to_string(kind);
      EXPECT_GT(a.bandwidth.bytes_per_s(), 0.0);
      EXPECT_LE(collective_time(CollectiveOp::all_reduce, b, 1e8),
                collective_time(CollectiveOp::all_reduce, a, 1e8));
    }
  }
}

TEST(GroupPath, CollectiveTimeAddsLaunchLatency) {
  const GroupPath g = group_path(fake_machine(), Layout{1, 4, 1, 1}, GroupKind::x);
  EXPECT_EQ(
      collective_time(CollectiveOp::all_gather, g, 4e6),
      g.launch_latency + ring_collective_time(CollectiveOp::all_gather, 4, 4e6, g.bandwidth, g.step_latency));
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

using namespace ws::literals;
using ws::testing::fake_machine;

// 16 nodes in 8 groups of 2; a 4-node job. Contiguous: 2 groups of 8 ranks. Scattered: one node
// in each of 4 groups, R = 4 ranks per group.
TEST(GroupPathAllocation, ScatteredSpreadsInterGroupFlowsOverMoreGroupPairs) {
  Machine m = fake_machine(16);
  m.network.routing = RoutingPolicy::minimal;
  const Layout layout{2, 1, 1, 8};  // data group: 2 ranks at stride 8
  const GroupPath contiguous = group_path(m, layout, GroupKind::data, NodeAllocation::contiguous);
  const GroupPath scattered = group_path(m, layout, GroupKind::data, NodeAllocation::scattered);
  // Minimal: links_per_pair * 25 GB/s / f with f = R flows per group pair (stride is a multiple of R).
  EXPECT_DOUBLE_EQ(contiguous.bandwidth.gbps(), 25.0 / 8);
  EXPECT_DOUBLE_EQ(scattered.bandwidth.gbps(), 25.0 / 4);
  EXPECT_EQ(std::string(scattered.where), "inter-group");
}

TEST(GroupPathAllocation, ScatteredRingsLeaveTheSwitchAndTheGroup) {
  const Machine m = fake_machine(16);
  const Layout layout{1, 1, 1, 8};  // one Z ring over 2 nodes: one switch set when contiguous
  const GroupPath contiguous = group_path(m, layout, GroupKind::z, NodeAllocation::contiguous);
  const GroupPath scattered = group_path(m, layout, GroupKind::z, NodeAllocation::scattered);
  EXPECT_EQ(std::string(contiguous.where), "inter-node");
  EXPECT_EQ(std::string(scattered.where), "inter-group");
  // 1 switch vs 3 switches + a local and a global link.
  EXPECT_EQ(scattered.step_latency - contiguous.step_latency, 2 * 350_ns + 100_ns + 500_ns);
}

TEST(GroupPathAllocation, IntraNodeGroupsDoNotDependOnAllocation) {
  const Machine m = fake_machine(16);
  const Layout layout{4, 4, 1, 1};
  const GroupPath a = group_path(m, layout, GroupKind::x, NodeAllocation::contiguous);
  const GroupPath b = group_path(m, layout, GroupKind::x, NodeAllocation::scattered);
  EXPECT_EQ(a.bandwidth, b.bandwidth);
  EXPECT_EQ(a.step_latency, b.step_latency);
}

}  // namespace
}  // namespace ws
