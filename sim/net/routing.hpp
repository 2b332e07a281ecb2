// Paths through the dragonfly: minimal (at most 3 switch-to-switch hops: local, global, local),
// Valiant non-minimal (through a random intermediate group), and adaptive (per flow, least loaded
// of a few minimal and non-minimal candidates, biased to minimal as UGAL / Slingshot do).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "base/random.hpp"
#include "sim/machine/machine.hpp"
#include "sim/net/topology.hpp"

namespace ws {

// A path as directed link ids, stored inline: the longest (Valiant across groups, 2-hop intra-node
// detours at both ends) has 15 links.
struct Path {
  static constexpr int kMaxLinks = 16;
  std::array<int, kMaxLinks> links{};
  int size = 0;
  bool minimal = true;
  void push(int link) { links[static_cast<std::size_t>(size++)] = link; }
  std::span<const int> view() const { return {links.data(), static_cast<std::size_t>(size)}; }
};

struct RouterOptions {
  RoutingPolicy policy = RoutingPolicy::adaptive;
  std::uint64_t seed = 1;
  int minimal_candidates = 2;      // adaptive: minimal paths compared (over different global links)
  int non_minimal_candidates = 2;  // adaptive: Valiant paths compared
  // Adaptive takes a non-minimal path only if its bottleneck load per byte/s, times this bias, is
  // still below the best minimal path's (a Valiant path uses about twice the links).
  double non_minimal_bias = 2.0;
};

class Router {
 public:
  Router(const Topology& topology, RouterOptions options);

  // Path from device src to device dst (global device ids, src != dst). `link_load[l]` is the number
  // of flows currently on link l; only the adaptive policy reads it.
  Path route(int src_device, int dst_device, std::span<const int> link_load);

  std::uint64_t minimal_routes() const { return minimal_routes_; }
  std::uint64_t non_minimal_routes() const { return non_minimal_routes_; }

 private:
  void intra_node(Path& p, int node, int a, int b) const;
  void switches_minimal(Path& p, int s, int t, int k) const;  // k: global link index of the pair
  void switches_valiant(Path& p, int s, int t, int mid, int k1, int k2) const;
  int pick_intermediate_group(int a, int b);
  double path_cost(const Path& p, std::span<const int> link_load) const;

  const Topology* topology_;
  RouterOptions options_;
  RandomStream rng_;
  std::uint64_t minimal_routes_ = 0;
  std::uint64_t non_minimal_routes_ = 0;
};

// Number of switch-to-switch links (local + global) on a path.
int switch_hops(const Topology& topology, const Path& path);

}  // namespace ws
