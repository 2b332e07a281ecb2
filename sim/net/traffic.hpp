// Traffic as a fluid: how point-to-point demands load the links of the machine when every message
// is sprayed over the paths the router may take. Slingshot routes per packet, so a long message's
// bytes spread over the candidate paths instead of following one (machines.md 1.2). Both collective
// models, the closed form and the flow network (sim/pricing), price from these loads: placement
// (which NIC, which switch) and routing live here once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/units.hpp"
#include "sim/machine/machine.hpp"
#include "sim/net/link_share.hpp"
#include "sim/net/topology.hpp"

namespace ws {

// `weight` units of traffic from one device to another (e.g. the bytes of one flow relative to the
// largest flow of its phase).
struct TrafficDemand {
  int src_device = 0;
  int dst_device = 0;
  double weight = 1.0;
};

// Per-link loads of a set of demands, split by what routing changes. Each list is sorted by link.
struct TrafficLoads {
  std::vector<LinkShare> fixed;    // intra-node hops, NIC injection and endpoint links: every policy
  std::vector<LinkShare> minimal;  // switch-to-switch links under minimal routing
  std::vector<LinkShare> valiant;  // switch-to-switch links under Valiant routing
  Time minimal_latency;            // the longest demand path (links + switches), minimal routing
  Time valiant_latency;            // the same with the Valiant detour (one more global and local hop)
  std::vector<Time> demand_minimal_latency;  // per demand, in order (zero for an empty demand)
  std::vector<Time> demand_valiant_latency;
  bool inter_node = false;         // some demand leaves its node
};

// Minimal traffic between two switches of one group takes their local link; between groups it
// spreads evenly over the pair's global links (with the local hops to and from them). Valiant
// traffic detours through every other switch of the group (inside a group) or every other built
// group (between groups) in equal shares, and within the intermediate group from each landing
// link to each departing link. Intra-node hops take the topology's fewest-hop route (intra_route);
// a device without a NIC of its own reaches its node's through it.
class TrafficRouter {
 public:
  explicit TrafficRouter(const Topology& topology);
  // Loads of the demands; `valiant` empty unless `with_valiant`.
  TrafficLoads route(std::span<const TrafficDemand> demands, bool with_valiant = true);
  // The Valiant loads of the last route() call's demands, as route(demands, true) lists them
  // (adaptive routing asks for them only when minimal paths are the bottleneck).
  std::vector<LinkShare> valiant_loads();

 private:
  struct SwitchDemand {  // between switches; valiant_between_groups also keys it by group
    int from = 0, to = 0;
    double weight = 0;
  };
  // A dense accumulator over every link that marks the links it touched, one bit each: take()
  // visits them in link order without sorting them or reading every link's load.
  struct Accumulator {
    std::vector<double> load;
    std::vector<std::uint64_t> touched;  // bit l % 64 of word l / 64: link l was added to
    void resize(std::size_t links);
    void add(int link, double w) {  // inline: routing calls it for every hop of every demand
      const auto l = static_cast<std::size_t>(link);
      load[l] += w;
      touched[l / 64] |= std::uint64_t{1} << (l % 64);
    }
    std::vector<LinkShare> take();  // sorted, zeroes the touched entries
  };
  void intra_node(Accumulator& acc, int node, int a, int b, double w, Time& latency) const;
  // Merges equal (from, to) entries of `v`, sorted by (from, to); from < from_count, to < to_count.
  void merge_pairs(std::vector<SwitchDemand>& v, std::size_t from_count, std::size_t to_count);
  void minimal_switches(const SwitchDemand& d);
  void valiant_within_groups(std::span<const SwitchDemand> pairs);
  void valiant_between_groups(std::span<const SwitchDemand> pairs);

  const Topology* topology_;
  Accumulator fixed_, minimal_, valiant_;
  std::vector<SwitchDemand> switch_demands_;
  // merge_pairs()'s scratch: each `from` bucket's start and fill cursor, entries by `from`, and a slot
  // per `to` (-1 between calls).
  std::vector<std::size_t> bucket_start_;
  std::vector<std::size_t> bucket_next_;
  std::vector<SwitchDemand> by_source_;
  std::vector<int> slot_of_target_;
  std::vector<double> out_, in_;  // per switch: Valiant traffic it sends / receives in its group
};


// fixed + (1 - v) minimal + v valiant, sorted by link.
std::vector<LinkShare> mix_routes(const TrafficLoads& loads, double valiant_share);

// Capacity of every link: its bandwidth, less the share other jobs take on global links
// (`background_load` in [0, 1), machine file network.background_load).
std::vector<Bandwidth> link_capacities(const Topology& topology, double background_load);

// Time per unit of weight on the most loaded link: max over links of weight / capacity. A flow
// whose every link share is `weight` moves at 1 / bottleneck units per second alone.
TimePerByte bottleneck(std::span<const LinkShare> shares, std::span<const Bandwidth> capacity);

// bottleneck(mix_routes(loads, valiant_share), capacity), without building the mixed list.
TimePerByte mixed_bottleneck(const TrafficLoads& loads, double valiant_share, std::span<const Bandwidth> capacity);

// The Valiant share of these loads under a routing policy: 0 (minimal), 1 (non-minimal), or for
// adaptive routing the smallest share whose bottleneck is within 0.1% of the best one. Slingshot
// adapts per packet to queue depths with a bias to minimal paths (machines.md 1.2); the fluid limit
// of that balances the loads, and the bias keeps the share no larger than the balance needs.
double valiant_share(const TrafficLoads& loads, RoutingPolicy policy, std::span<const Bandwidth> capacity);

}  // namespace ws
