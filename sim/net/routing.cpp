// Minimal, Valiant and adaptive routing on the dragonfly.
#include "sim/net/routing.hpp"

#include <cassert>
#include <limits>

namespace ws {

Router::Router(const Topology& topology, RouterOptions options)
    : topology_(&topology), options_(options), rng_(options.seed, StreamId::routing) {}

void Router::intra_node(Path& p, int node, int a, int b) const {
  const Topology& t = *topology_;
  int from = a;
  for (const int to : t.intra_route(a, b)) {
    p.push(t.intra_node_link(node, from, to));
    from = to;
  }
}

void Router::switches_minimal(Path& p, int s, int t, int k) const {
  const Topology& topo = *topology_;
  if (s == t) return;
  const int SG = topo.switches_per_group;
  const int a = s / SG, b = t / SG;
  if (a == b) {
    p.push(topo.local_link(a, s % SG, t % SG));
    return;
  }
  const int g = topo.global_link(a, b, k);
  const Link& gl = topo.links[static_cast<std::size_t>(g)];
  const int gs = gl.from - topo.switch_vertex(0), gt = gl.to - topo.switch_vertex(0);
  if (gs != s) p.push(topo.local_link(a, s % SG, gs % SG));
  p.push(g);
  if (gt != t) p.push(topo.local_link(b, gt % SG, t % SG));
}

void Router::switches_valiant(Path& p, int s, int t, int mid, int k1, int k2) const {
  const Topology& topo = *topology_;
  const int SG = topo.switches_per_group;
  const int a = s / SG, b = t / SG;
  if (a == b) {
    // Inside one group, Valiant detours through an intermediate switch `mid` of the group.
    const int m = a * SG + mid;
    switches_minimal(p, s, m, 0);
    switches_minimal(p, m, t, 0);
    return;
  }
  const int g1 = topo.global_link(a, mid, k1);
  const int landing = topo.links[static_cast<std::size_t>(g1)].to - topo.switch_vertex(0);
  switches_minimal(p, s, landing, k1);
  switches_minimal(p, landing, t, k2);
}

int Router::pick_intermediate_group(int a, int b) {
  const int G = topology_->groups;
  const int others = a == b ? G - 1 : G - 2;
  if (others <= 0) return -1;
  auto m = static_cast<int>(rng_.uniform_below(static_cast<std::uint64_t>(others)));
  const int lo = a < b ? a : b, hi = a < b ? b : a;
  if (m >= lo) ++m;
  if (a != b && m >= hi) ++m;
  return m;
}

double Router::path_cost(const Path& p, std::span<const int> link_load) const {
  // Bottleneck of (flows + 1) / bandwidth: the inverse of the share a new flow would get.
  double worst = 0.0;
  for (const int l : p.view()) {
    const double c = (link_load[static_cast<std::size_t>(l)] + 1.0) /
                     topology_->links[static_cast<std::size_t>(l)].bandwidth.bytes_per_s();
    if (c > worst) worst = c;
  }
  return worst;
}

Path Router::route(int src_device, int dst_device, std::span<const int> link_load) {
  const Topology& t = *topology_;
  const int dpn = t.devices_per_node;
  const int na = src_device / dpn, nb = dst_device / dpn;
  const int la = src_device % dpn, lb = dst_device % dpn;
  Path p;
  if (na == nb) {
    intra_node(p, na, la, lb);
    ++minimal_routes_;
    return p;
  }
  // Leave through the NIC the source device uses (a detour inside the node if it hangs elsewhere).
  const int nic_a_local = t.nic_of_device[static_cast<std::size_t>(la)];
  const int nic_b_local = t.nic_of_device[static_cast<std::size_t>(lb)];
  const int nic_a = na * t.nics_per_node + nic_a_local, nic_b = nb * t.nics_per_node + nic_b_local;
  const int host_a = t.links[static_cast<std::size_t>(t.injection_up[static_cast<std::size_t>(nic_a)])].from % dpn;
  const int host_b = t.links[static_cast<std::size_t>(t.injection_down[static_cast<std::size_t>(nic_b)])].to % dpn;
  const int s = t.switch_of_nic[static_cast<std::size_t>(nic_a)], d = t.switch_of_nic[static_cast<std::size_t>(nic_b)];
  const int SG = t.switches_per_group;
  const bool same_group = s / SG == d / SG;
  const int L = t.global_links_per_pair;

  auto assemble = [&](auto&& switch_part) {
    Path q;
    intra_node(q, na, la, host_a);
    q.push(t.injection_up[static_cast<std::size_t>(nic_a)]);
    q.push(t.endpoint_up[static_cast<std::size_t>(nic_a)]);
    switch_part(q);
    q.push(t.endpoint_down[static_cast<std::size_t>(nic_b)]);
    q.push(t.injection_down[static_cast<std::size_t>(nic_b)]);
    intra_node(q, nb, host_b, lb);
    return q;
  };
  auto random_global = [&]() { return same_group ? 0 : static_cast<int>(rng_.uniform_below(static_cast<std::uint64_t>(L))); };
  auto minimal = [&](int k) { return assemble([&](Path& q) { switches_minimal(q, s, d, k); }); };
  auto valiant = [&]() -> Path {
    const int mid = same_group ? static_cast<int>(rng_.uniform_below(static_cast<std::uint64_t>(SG)))
                               : pick_intermediate_group(s / SG, d / SG);
    if (mid < 0) return minimal(random_global());
    const int k1 = static_cast<int>(rng_.uniform_below(static_cast<std::uint64_t>(L)));
    const int k2 = static_cast<int>(rng_.uniform_below(static_cast<std::uint64_t>(L)));
    Path q = assemble([&](Path& r) { switches_valiant(r, s, d, mid, k1, k2); });
    q.minimal = false;
    return q;
  };

  switch (options_.policy) {
    case RoutingPolicy::minimal:
      // Deterministic spreading over the pair's global links by endpoints (like ECMP hashing).
      p = minimal(same_group ? 0 : static_cast<int>((static_cast<unsigned>(src_device) * 2654435761u +
                                                       static_cast<unsigned>(dst_device)) % static_cast<unsigned>(L)));
      break;
    case RoutingPolicy::non_minimal:
      p = valiant();
      break;
    case RoutingPolicy::adaptive: {
      double best_min = std::numeric_limits<double>::max();
      for (int i = 0; i < options_.minimal_candidates; ++i) {
        Path q = minimal(random_global());
        const double c = path_cost(q, link_load);
        if (c < best_min) {
          best_min = c;
          p = q;
        }
      }
      double best_nm = std::numeric_limits<double>::max();
      Path nm;
      for (int i = 0; i < options_.non_minimal_candidates; ++i) {
        Path q = valiant();
        const double c = path_cost(q, link_load);
        if (!q.minimal && c < best_nm) {
          best_nm = c;
          nm = q;
        }
      }
      if (best_nm < std::numeric_limits<double>::max() && best_nm * options_.non_minimal_bias < best_min) p = nm;
      break;
    }
  }
  if (p.minimal) {
    ++minimal_routes_;
  } else {
    ++non_minimal_routes_;
  }
  return p;
}

int switch_hops(const Topology& topology, const Path& path) {
  int hops = 0;
  for (const int l : path.view()) {
    const LinkKind k = topology.links[static_cast<std::size_t>(l)].kind;
    if (k == LinkKind::local || k == LinkKind::global) ++hops;
  }
  return hops;
}

}  // namespace ws
