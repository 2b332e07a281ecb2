// Fluid routing of demands over the topology, and the adaptive Valiant share.
#include "sim/net/traffic.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace ws {

void TrafficRouter::Accumulator::add(int link, double w) {
  auto& slot = load[static_cast<std::size_t>(link)];
  if (slot == 0.0) touched.push_back(link);
  slot += w;
}

std::vector<LinkShare> TrafficRouter::Accumulator::take() {
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<LinkShare> out;
  out.reserve(touched.size());
  for (const int l : touched) {
    auto& slot = load[static_cast<std::size_t>(l)];
    if (slot > 0.0) out.push_back({l, slot});
    slot = 0.0;
  }
  touched.clear();
  return out;
}

TrafficRouter::TrafficRouter(const Topology& topology) : topology_(&topology) {
  const std::size_t links = topology.links.size();
  fixed_.load.assign(links, 0.0);
  minimal_.load.assign(links, 0.0);
  valiant_.load.assign(links, 0.0);
}

namespace {

Time link_latency(const Topology& t, int link) {
  const Link& l = t.links[static_cast<std::size_t>(link)];
  return l.latency + (t.is_switch_vertex(l.to) ? t.switch_latency : Time::zero());
}

}  // namespace

void TrafficRouter::intra_node(Accumulator& acc, int node, int a, int b, double w, Time& latency) const {
  const Topology& t = *topology_;
  if (a == b) return;
  const int direct = t.intra_node_link(node, a, b);
  if (direct >= 0) {
    acc.add(direct, w);
    latency += link_latency(t, direct);
    return;
  }
  const int via = t.intra_via[static_cast<std::size_t>(a * t.devices_per_node + b)];
  assert(via >= 0 && "no intra-node path of at most 2 hops");
  for (const int l : {t.intra_node_link(node, a, via), t.intra_node_link(node, via, b)}) {
    acc.add(l, w);
    latency += link_latency(t, l);
  }
}

void TrafficRouter::route_switches(const SwitchDemand& d) {
  const Topology& t = *topology_;
  const int SG = t.switches_per_group;
  const int a = d.from / SG, b = d.to / SG;
  if (a == b) {
    minimal_.add(t.local_link(a, d.from % SG, d.to % SG), d.weight);
    if (SG <= 2) {
      valiant_.add(t.local_link(a, d.from % SG, d.to % SG), d.weight);
      return;
    }
    // Through each other switch of the group in equal shares.
    const double w = d.weight / (SG - 2);
    for (int m = 0; m < SG; ++m) {
      if (m == d.from % SG || m == d.to % SG) continue;
      valiant_.add(t.local_link(a, d.from % SG, m), w);
      valiant_.add(t.local_link(a, m, d.to % SG), w);
    }
    return;
  }
  const int L = t.global_links_per_pair;
  const double w = d.weight / L;
  const int base = t.switch_vertex(0);
  for (int k = 0; k < L; ++k) {
    const int g = t.global_link(a, b, k);
    const Link& gl = t.links[static_cast<std::size_t>(g)];
    const int gs = gl.from - base, gt = gl.to - base;
    if (gs != d.from) minimal_.add(t.local_link(a, d.from % SG, gs % SG), w);
    minimal_.add(g, w);
    if (gt != d.to) minimal_.add(t.local_link(b, gt % SG, d.to % SG), w);
  }
  valiant_between_groups(d);
}

void TrafficRouter::valiant_between_groups(const SwitchDemand& d) {
  const Topology& t = *topology_;
  const int SG = t.switches_per_group, G = t.groups, L = t.global_links_per_pair;
  const int a = d.from / SG, b = d.to / SG;
  if (G < 3) {
    // No intermediate group: Valiant falls back to the minimal paths (as Router does).
    const double w = d.weight / L;
    const int base = t.switch_vertex(0);
    for (int k = 0; k < L; ++k) {
      const int g = t.global_link(a, b, k);
      const Link& gl = t.links[static_cast<std::size_t>(g)];
      if (gl.from - base != d.from) valiant_.add(t.local_link(a, d.from % SG, (gl.from - base) % SG), w);
      valiant_.add(g, w);
      if (gl.to - base != d.to) valiant_.add(t.local_link(b, (gl.to - base) % SG, d.to % SG), w);
    }
    return;
  }
  const int base = t.switch_vertex(0);
  const double per_link = d.weight / ((G - 2) * static_cast<double>(L));
  const double per_pair = per_link / L;
  for (int c = 0; c < G; ++c) {
    if (c == a || c == b) continue;
    for (int k1 = 0; k1 < L; ++k1) {
      const int g1 = t.global_link(a, c, k1);
      const Link& l1 = t.links[static_cast<std::size_t>(g1)];
      const int exit = l1.from - base, landing = l1.to - base;
      if (exit != d.from) valiant_.add(t.local_link(a, d.from % SG, exit % SG), per_link);
      valiant_.add(g1, per_link);
      for (int k2 = 0; k2 < L; ++k2) {
        const int depart = t.links[static_cast<std::size_t>(t.global_link(c, b, k2))].from - base;
        if (depart != landing) valiant_.add(t.local_link(c, landing % SG, depart % SG), per_pair);
      }
    }
    for (int k2 = 0; k2 < L; ++k2) {
      const int g2 = t.global_link(c, b, k2);
      const int arrival = t.links[static_cast<std::size_t>(g2)].to - base;
      valiant_.add(g2, per_link);
      if (arrival != d.to) valiant_.add(t.local_link(b, arrival % SG, d.to % SG), per_link);
    }
  }
}

TrafficLoads TrafficRouter::route(std::span<const TrafficDemand> demands) {
  const Topology& t = *topology_;
  const int dpn = t.devices_per_node;
  const int SG = t.switches_per_group;
  TrafficLoads out;
  switch_demands_.clear();
  const Time valiant_extra_groups = [&] {
    // One more global and local hop, two more switches (landing and leaving the intermediate group).
    if (t.global_links_per_pair < 1 || t.groups < 3) return Time::zero();
    const Link& g = t.links[static_cast<std::size_t>(t.global_link(0, 1, 0))];
    const Time local = SG > 1 ? t.links[static_cast<std::size_t>(t.local_link(0, 0, 1))].latency : Time::zero();
    return g.latency + local + 2 * t.switch_latency;
  }();
  const Time valiant_extra_local = [&] {
    if (SG < 3) return Time::zero();
    return t.links[static_cast<std::size_t>(t.local_link(0, 0, 1))].latency + t.switch_latency;
  }();
  for (const TrafficDemand& dem : demands) {
    if (dem.weight <= 0.0 || dem.src_device == dem.dst_device) continue;
    const int na = dem.src_device / dpn, nb = dem.dst_device / dpn;
    const int la = dem.src_device % dpn, lb = dem.dst_device % dpn;
    Time latency;
    if (na == nb) {
      intra_node(fixed_, na, la, lb, dem.weight, latency);
      out.minimal_latency = max(out.minimal_latency, latency);
      out.valiant_latency = max(out.valiant_latency, latency);
      continue;
    }
    out.inter_node = true;
    const int nic_a = na * t.nics_per_node + t.nic_of_device[static_cast<std::size_t>(la)];
    const int nic_b = nb * t.nics_per_node + t.nic_of_device[static_cast<std::size_t>(lb)];
    const int host_a = t.links[static_cast<std::size_t>(t.injection_up[static_cast<std::size_t>(nic_a)])].from % dpn;
    const int host_b = t.links[static_cast<std::size_t>(t.injection_down[static_cast<std::size_t>(nic_b)])].to % dpn;
    intra_node(fixed_, na, la, host_a, dem.weight, latency);
    for (const int l : {t.injection_up[static_cast<std::size_t>(nic_a)], t.endpoint_up[static_cast<std::size_t>(nic_a)],
                        t.endpoint_down[static_cast<std::size_t>(nic_b)],
                        t.injection_down[static_cast<std::size_t>(nic_b)]}) {
      fixed_.add(l, dem.weight);
      latency += link_latency(t, l);
    }
    intra_node(fixed_, nb, host_b, lb, dem.weight, latency);
    const int s = t.switch_of_nic[static_cast<std::size_t>(nic_a)], d = t.switch_of_nic[static_cast<std::size_t>(nic_b)];
    Time valiant = latency;
    if (s != d) {
      switch_demands_.push_back({s, d, dem.weight});
      // Minimal path latency through global link 0 of the pair (all of the pair's links are alike).
      const int ga = s / SG, gb = d / SG;
      if (ga == gb) {
        latency += link_latency(t, t.local_link(ga, s % SG, d % SG));
        valiant = latency + valiant_extra_local;
      } else {
        const int g = t.global_link(ga, gb, 0);
        const Link& gl = t.links[static_cast<std::size_t>(g)];
        const int base = t.switch_vertex(0);
        if (gl.from - base != s) latency += link_latency(t, t.local_link(ga, s % SG, (gl.from - base) % SG));
        latency += link_latency(t, g);
        if (gl.to - base != d) latency += link_latency(t, t.local_link(gb, (gl.to - base) % SG, d % SG));
        valiant = latency + valiant_extra_groups;
      }
    } else {
      valiant = latency;
    }
    out.minimal_latency = max(out.minimal_latency, latency);
    out.valiant_latency = max(out.valiant_latency, valiant);
  }
  // One pass per distinct switch pair: rings send many flows between the same switches.
  std::sort(switch_demands_.begin(), switch_demands_.end(), [](const SwitchDemand& x, const SwitchDemand& y) {
    return x.from < y.from || (x.from == y.from && x.to < y.to);
  });
  for (std::size_t i = 0; i < switch_demands_.size();) {
    SwitchDemand merged = switch_demands_[i];
    std::size_t j = i + 1;
    for (; j < switch_demands_.size() && switch_demands_[j].from == merged.from && switch_demands_[j].to == merged.to; ++j)
      merged.weight += switch_demands_[j].weight;
    route_switches(merged);
    i = j;
  }
  out.fixed = fixed_.take();
  out.minimal = minimal_.take();
  out.valiant = valiant_.take();
  return out;
}

std::vector<LinkShare> mix_routes(const TrafficLoads& loads, double valiant_share) {
  std::vector<LinkShare> out;
  out.reserve(loads.fixed.size() + loads.minimal.size() + loads.valiant.size());
  for (const LinkShare& s : loads.fixed) out.push_back(s);
  if (valiant_share < 1.0)
    for (const LinkShare& s : loads.minimal) out.push_back({s.link, s.weight * (1.0 - valiant_share)});
  if (valiant_share > 0.0)
    for (const LinkShare& s : loads.valiant) out.push_back({s.link, s.weight * valiant_share});
  std::sort(out.begin(), out.end(), [](const LinkShare& a, const LinkShare& b) { return a.link < b.link; });
  std::size_t n = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (n > 0 && out[n - 1].link == out[i].link) {
      out[n - 1].weight += out[i].weight;
    } else {
      out[n++] = out[i];
    }
  }
  out.resize(n);
  return out;
}

std::vector<double> link_capacities(const Topology& topology, double background_load) {
  std::vector<double> c(topology.links.size());
  for (std::size_t l = 0; l < c.size(); ++l) {
    const Link& link = topology.links[l];
    c[l] = link.bandwidth.bytes_per_s() * (link.kind == LinkKind::global ? 1.0 - background_load : 1.0);
  }
  return c;
}

double bottleneck(std::span<const LinkShare> shares, std::span<const double> capacity) {
  double worst = 0.0;
  for (const LinkShare& s : shares) worst = std::max(worst, s.weight / capacity[static_cast<std::size_t>(s.link)]);
  return worst;
}

double valiant_share(const TrafficLoads& loads, RoutingPolicy policy, std::span<const double> capacity) {
  if (policy == RoutingPolicy::minimal || loads.valiant.empty()) return 0.0;
  if (policy == RoutingPolicy::non_minimal) return 1.0;
  // f(v) = max over links of (a + b v) / c is convex and piecewise linear in v.
  double fixed_worst = bottleneck(loads.fixed, capacity);
  std::vector<std::pair<double, double>> lines;  // (a / c, b / c) per switch-to-switch link
  {
    std::size_t i = 0, j = 0;
    while (i < loads.minimal.size() || j < loads.valiant.size()) {
      const int li = i < loads.minimal.size() ? loads.minimal[i].link : std::numeric_limits<int>::max();
      const int lj = j < loads.valiant.size() ? loads.valiant[j].link : std::numeric_limits<int>::max();
      const int l = std::min(li, lj);
      const double m = li == l ? loads.minimal[i++].weight : 0.0;
      const double v = lj == l ? loads.valiant[j++].weight : 0.0;
      const double c = capacity[static_cast<std::size_t>(l)];
      lines.emplace_back(m / c, (v - m) / c);
    }
  }
  auto f = [&](double v) {
    double worst = fixed_worst;
    for (const auto& [a, b] : lines) worst = std::max(worst, a + b * v);
    return worst;
  };
  double lo = 0.0, hi = 1.0;
  for (int it = 0; it < 60; ++it) {
    const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) <= f(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  const double best = std::min(f(0.5 * (lo + hi)), f(0.0));
  if (f(0.0) <= best * (1.0 + 1e-3)) return 0.0;
  // f is non-increasing on [0, optimum]: the smallest share within 0.1% of the best by bisection.
  double a = 0.0, b = 0.5 * (lo + hi);
  for (int it = 0; it < 50; ++it) {
    const double m = 0.5 * (a + b);
    if (f(m) <= best * (1.0 + 1e-3)) {
      b = m;
    } else {
      a = m;
    }
  }
  return b;
}

}  // namespace ws
