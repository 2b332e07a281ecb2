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

// Demands of every kind: within a node, between nodes of one switch, one group, and two groups,
// with unequal weights and repeated switch pairs.
std::vector<TrafficDemand> mixed_demands(const Topology& t) {
  std::vector<TrafficDemand> demands;
  const int devices = t.devices();
  for (int i = 0; i < 3 * devices; ++i) {
    const int src = (7 * i + 3) % devices, dst = (11 * i + 5) % devices;
    demands.push_back({src, dst, 0.5 + (i % 5) * 0.25});
  }
  return demands;
}

bool same_loads(std::span<const LinkShare> a, std::span<const LinkShare> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].link != b[i].link || a[i].weight != b[i].weight) return false;  // bit for bit
  }
  return true;
}

TEST(TrafficRouter, EachLoadListNamesALinkOnceInLinkOrder) {
  const Machine m = testing::small_machine(4, 4, 4, 4, 2, 2);
  const Topology t = build_topology(m, 16);
  TrafficRouter router(t);
  const std::vector<TrafficDemand> demands = mixed_demands(t);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass starts from what the first left
    const TrafficLoads loads = router.route(demands, true);
    for (const auto* list : {&loads.fixed, &loads.minimal, &loads.valiant}) {
      ASSERT_FALSE(list->empty());
      for (std::size_t i = 1; i < list->size(); ++i) EXPECT_LT((*list)[i - 1].link, (*list)[i].link);
      for (const LinkShare& s : *list) EXPECT_GT(s.weight, 0.0);
    }
    // Every demand's weight crosses its source's injection link once.
    double weight_out_of_nodes = 0.0;
    for (const TrafficDemand& d : demands)
      if (d.src_device / t.devices_per_node != d.dst_device / t.devices_per_node) weight_out_of_nodes += d.weight;
    EXPECT_NEAR(total_on(t, loads.fixed, LinkKind::injection), 2.0 * weight_out_of_nodes, 1e-9);
  }
}

// Demands between the same switches are merged before routing between switches: a demand given
// twice loads every link as the demand of twice its weight (the weights are quarters, so every sum
// is exact and the lists must agree bit for bit).
TEST(TrafficRouter, ADemandGivenTwiceLoadsLinksAsOneOfTwiceItsWeight) {
  const Machine m = testing::small_machine(4, 4, 4, 4, 2, 2);
  const Topology t = build_topology(m, 16);
  const std::vector<TrafficDemand> once = mixed_demands(t);
  std::vector<TrafficDemand> twice, doubled;
  for (const TrafficDemand& d : once) {
    twice.push_back(d);
    twice.push_back(d);
    doubled.push_back({d.src_device, d.dst_device, 2.0 * d.weight});
  }
  TrafficRouter router(t);
  const TrafficLoads a = router.route(twice, true);
  const TrafficLoads b = router.route(doubled, true);
  EXPECT_TRUE(same_loads(a.fixed, b.fixed));
  EXPECT_TRUE(same_loads(a.minimal, b.minimal));
  EXPECT_TRUE(same_loads(a.valiant, b.valiant));
  const TrafficLoads single = router.route(once, true);
  ASSERT_EQ(single.minimal.size(), b.minimal.size());
  for (std::size_t i = 0; i < b.minimal.size(); ++i) EXPECT_EQ(b.minimal[i].weight, 2.0 * single.minimal[i].weight);
}

// Adaptive routing asks for the Valiant loads only after a minimal pass (sim/pricing JobNetwork).
TEST(TrafficRouter, ValiantLoadsAfterAMinimalPassAreThoseOfAValiantPass) {
  const Machine m = testing::small_machine(4, 4, 4, 4, 2, 2);
  const Topology t = build_topology(m, 16);
  const std::vector<TrafficDemand> demands = mixed_demands(t);
  TrafficRouter both(t), minimal_first(t);
  const TrafficLoads at_once = both.route(demands, true);
  TrafficLoads after = minimal_first.route(demands, false);
  EXPECT_TRUE(after.valiant.empty());
  after.valiant = minimal_first.valiant_loads();
  EXPECT_TRUE(same_loads(at_once.fixed, after.fixed));
  EXPECT_TRUE(same_loads(at_once.minimal, after.minimal));
  EXPECT_TRUE(same_loads(at_once.valiant, after.valiant));
  EXPECT_FALSE(after.valiant.empty());
}

// One demand's loads are a unit flow from its source device to its destination: at every vertex
// the weight in equals the weight out, except -1 at the source and +1 at the destination; its
// switch-to-switch hops weigh at most 3 under minimal routing (local, global, local) and 5 with
// the Valiant detour. A node of 3 devices in a line makes some pairs take 2 intra-node hops.
TEST(TrafficRouter, EveryDemandIsAUnitFlowFromSourceToDestination) {
  Machine m = testing::small_machine(4, 4, 4, 2, 1, 2);
  m.node.links.clear();
  m.node.devices = 3;
  m.node.links.push_back({0, 1, Bandwidth::from_gbps(100), Time::from_ns(200)});
  m.node.links.push_back({1, 2, Bandwidth::from_gbps(100), Time::from_ns(200)});
  const Topology t = build_topology(m, 16);
  TrafficRouter router(t);
  const auto vertices = static_cast<std::size_t>(boost::num_vertices(t.graph));
  for (int a = 0; a < t.devices(); ++a) {
    for (int b = 0; b < t.devices(); ++b) {
      if (a == b) continue;
      const TrafficDemand demand{a, b, 1.0};
      const TrafficLoads loads = router.route({&demand, 1}, true);
      for (const auto* routed : {&loads.minimal, &loads.valiant}) {
        std::vector<double> net_in(vertices, 0.0);
        double switch_hops = 0.0;
        for (const auto* list : {&loads.fixed, routed}) {
          for (const LinkShare& s : *list) {
            const Link& l = t.links[static_cast<std::size_t>(s.link)];
            net_in[static_cast<std::size_t>(l.to)] += s.weight;
            net_in[static_cast<std::size_t>(l.from)] -= s.weight;
            if (l.kind == LinkKind::local || l.kind == LinkKind::global) switch_hops += s.weight;
          }
        }
        for (std::size_t v = 0; v < vertices; ++v) {
          const double expected = v == static_cast<std::size_t>(t.device_vertex(b))   ? 1.0
                                  : v == static_cast<std::size_t>(t.device_vertex(a)) ? -1.0
                                                                                       : 0.0;
          ASSERT_NEAR(net_in[v], expected, 1e-12) << a << " -> " << b << " vertex " << v;
        }
        EXPECT_LE(switch_hops, routed == &loads.minimal ? 3.0 + 1e-12 : 5.0 + 1e-12) << a << " -> " << b;
      }
    }
  }
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
  const TimePerByte adaptive = bottleneck(mix_routes(loads, v), capacity);
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
    const double expected = t.links[l].kind == LinkKind::global ? 0.75 * free[l].bytes_per_s() : free[l].bytes_per_s();
    EXPECT_DOUBLE_EQ(busy[l].bytes_per_s(), expected) << l;
  }
}

}  // namespace
}  // namespace ws
