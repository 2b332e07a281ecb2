// Fluid routing: where demands put their weight, conservation per link class, and the adaptive
// Valiant share.
#include "sim/net/traffic.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

double total_on(const Topology& t, std::span<const LinkShare> shares, LinkKind kind) {
  double sum = 0;
  for (const LinkShare& s : shares)
    if (t.links[static_cast<std::size_t>(s.link)].kind == kind) sum += s.weight;
  return sum;
}

double weight_of(std::span<const LinkShare> shares, int link) {
  for (const LinkShare& s : shares)
    if (s.link == link) return s.weight;
  return 0.0;
}

TEST(TrafficRouter, IntraNodeDemandLoadsOnlyItsNodeLink) {
  const Machine m = testing::small_machine(2, 4, 2, 2, 1, 2);
  const Topology t = build_topology(m, 4);
  TrafficRouter router(t);
  const std::vector<TrafficDemand> demands{{0, 1, 3.0}};
  const TrafficLoads loads = router.route(demands);
  ASSERT_EQ(loads.fixed.size(), 1u);
  EXPECT_EQ(loads.fixed[0].link, t.intra_node_link(0, 0, 1));
  EXPECT_DOUBLE_EQ(loads.fixed[0].weight, 3.0);
  EXPECT_TRUE(loads.minimal.empty());
  EXPECT_FALSE(loads.inter_node);
}

TEST(TrafficRouter, MinimalTrafficBetweenGroupsSpreadsEvenlyOverThePairsGlobalLinks) {
  const int L = 4;
  const Machine m = testing::small_machine(3, 8, 2, 1, 1, L);
  const Topology t = build_topology(m, 6);
  TrafficRouter router(t);
  const std::vector<TrafficDemand> demands{{0, 2, 1.0}, {1, 3, 1.0}};  // group 0 -> group 1
  const TrafficLoads loads = router.route(demands);
  for (int k = 0; k < L; ++k) EXPECT_DOUBLE_EQ(weight_of(loads.minimal, t.global_link(0, 1, k)), 2.0 / L) << k;
  EXPECT_DOUBLE_EQ(total_on(t, loads.minimal, LinkKind::global), 2.0);
  // Each demand enters and leaves the fabric once through its NIC's endpoint link.
  EXPECT_DOUBLE_EQ(total_on(t, loads.fixed, LinkKind::endpoint), 4.0);
  EXPECT_DOUBLE_EQ(total_on(t, loads.fixed, LinkKind::injection), 4.0);
  // Valiant: two global hops per unit, through every other group.
  EXPECT_NEAR(total_on(t, loads.valiant, LinkKind::global), 4.0, 1e-12);
  EXPECT_GT(weight_of(loads.valiant, t.global_link(0, 2, 0)), 0.0);
  EXPECT_GT(loads.valiant_latency, loads.minimal_latency);
  EXPECT_TRUE(loads.inter_node);
}

TEST(TrafficRouter, LatencyOfAHopIsItsLinksAndSwitches) {
  const Machine m = testing::small_machine(1, 2, 2, 1, 1, 1);
  const Topology t = build_topology(m, 2);
  TrafficRouter router(t);
  const std::vector<TrafficDemand> demands{{0, 1, 1.0}};
  const TrafficLoads loads = router.route(demands);
  // NIC (1 us once), two endpoint links (50 ns), two switches entered (the source's, then the
  // destination's after one local link of 60 ns).
  EXPECT_EQ(loads.minimal_latency, Time::from_ns(1000 + 2 * 50 + 60 + 2 * 350));
}

TEST(ValiantShare, AdaptiveRoutingDivertsAHotGroupPairAndLeavesBalancedTrafficMinimal) {
  // Four groups, one thin global link per pair; every node of group 0 sends to group 1.
  const Machine m = testing::small_machine(4, 4, 4, 1, 1, 1, 200.0, 25.0);
  const Topology t = build_topology(m, 16);
  TrafficRouter router(t);
  std::vector<TrafficDemand> hot;
  for (int i = 0; i < 4; ++i) hot.push_back({i, 4 + i, 1.0});
  const TrafficLoads loads = router.route(hot);
  const auto capacity = link_capacities(t, 0.0);
  EXPECT_EQ(valiant_share(loads, RoutingPolicy::minimal, capacity), 0.0);
  EXPECT_EQ(valiant_share(loads, RoutingPolicy::non_minimal, capacity), 1.0);
  const double v = valiant_share(loads, RoutingPolicy::adaptive, capacity);
  EXPECT_GT(v, 0.3);
  EXPECT_LT(v, 1.0);
  const double adaptive = bottleneck(mix_routes(loads, v), capacity);
  EXPECT_LT(adaptive, bottleneck(mix_routes(loads, 0.0), capacity));
  EXPECT_LE(adaptive, bottleneck(mix_routes(loads, 1.0), capacity) * (1 + 1e-9));
  // One pair of nodes: the NIC, not the global link, is the bottleneck, so minimal paths stay.
  const std::vector<TrafficDemand> one{{0, 4, 1.0}};
  EXPECT_EQ(valiant_share(router.route(one), RoutingPolicy::adaptive, capacity), 0.0);
}

TEST(ValiantShare, BackgroundLoadOnGlobalLinksLowersTheirCapacityOnly) {
  const Machine m = testing::small_machine(2, 2, 2, 1, 1, 1);
  const Topology t = build_topology(m, 4);
  const auto free = link_capacities(t, 0.0);
  const auto busy = link_capacities(t, 0.25);
  for (std::size_t l = 0; l < t.links.size(); ++l) {
    const double expected = t.links[l].kind == LinkKind::global ? 0.75 * free[l] : free[l];
    EXPECT_DOUBLE_EQ(busy[l], expected) << l;
  }
}

}  // namespace
}  // namespace ws
