// Fluid routing of demands over the topology, and the adaptive Valiant share.
#include "sim/net/traffic.hpp"
#include "base/check.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace ws {

void TrafficRouter::Accumulator::resize(std::size_t links) {
  load.assign(links, 0.0);
  touched.assign((links + 63) / 64, 0);
}

std::vector<LinkShare> TrafficRouter::Accumulator::take() {
  // Two walks over the touched links in link order: the largest load (for the floor) and the
  // count, then the list, clearing each word behind it.
  const auto link_of = [](std::size_t word, std::uint64_t bits) {
    return word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
  };
  double largest = 0.0;
  std::size_t count = 0;
  for (std::size_t word = 0; word < touched.size(); ++word) {
    for (std::uint64_t bits = touched[word]; bits != 0; bits &= bits - 1)
      largest = std::max(largest, load[link_of(word, bits)]);
    count += static_cast<std::size_t>(std::popcount(touched[word]));
  }
  std::vector<LinkShare> out;
  out.reserve(count);
  // Shares taken back (Valiant's direct links) leave rounding residue, not load.
  const double floor = 1e-12 * largest;
  for (std::size_t word = 0; word < touched.size(); ++word) {
    for (std::uint64_t bits = touched[word]; bits != 0; bits &= bits - 1) {
      const std::size_t l = link_of(word, bits);
      if (load[l] > floor) out.push_back({static_cast<int>(l), load[l]});
      load[l] = 0.0;
    }
    touched[word] = 0;
  }
  return out;
}

TrafficRouter::TrafficRouter(const Topology& topology) : topology_(&topology) {
  const std::size_t links = topology.links.size();
  fixed_.resize(links);
  minimal_.resize(links);
  valiant_.resize(links);
  const auto switches = static_cast<std::size_t>(topology.groups * topology.switches_per_group);
  out_.assign(switches, 0.0);
  in_.assign(switches, 0.0);
}

namespace {

Time link_latency(const Topology& t, int link) {
  const Link& l = t.links[static_cast<std::size_t>(link)];
  return l.latency + (t.is_switch_vertex(l.to) ? t.switch_latency : Time::zero());
}

}  // namespace

void TrafficRouter::intra_node(Accumulator& acc, int node, int a, int b, double w, Time& latency) const {
  const Topology& t = *topology_;
  int from = a;
  for (const int to : t.intra_route(a, b)) {
    const int l = t.intra_node_link(node, from, to);
    acc.add(l, w);
    latency += link_latency(t, l);
    from = to;
  }
}

void TrafficRouter::minimal_switches(const SwitchDemand& d) {
  const Topology& t = *topology_;
  const int SG = t.switches_per_group;
  const int a = d.from / SG, b = d.to / SG;
  if (a == b) {
    minimal_.add(t.local_link(a, d.from % SG, d.to % SG), d.weight);
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
}

// Through each other switch m of the group in equal shares: s -> m gets, summed over the pairs
// (s, d), (out(s) - w(s, m)) / (S - 2), and m -> d gets (in(d) - w(m, d)) / (S - 2).
void TrafficRouter::valiant_within_groups(std::span<const SwitchDemand> pairs) {
  const Topology& t = *topology_;
  const int SG = t.switches_per_group;
  if (pairs.empty()) return;
  if (SG <= 2) {
    for (const SwitchDemand& d : pairs) valiant_.add(t.local_link(d.from / SG, d.from % SG, d.to % SG), d.weight);
    return;
  }
  const double share = 1.0 / (SG - 2);
  for (const SwitchDemand& d : pairs) {
    out_[static_cast<std::size_t>(d.from)] += d.weight;
    in_[static_cast<std::size_t>(d.to)] += d.weight;
  }
  std::vector<int> switches;
  for (const SwitchDemand& d : pairs) {
    switches.push_back(d.from);
    switches.push_back(d.to);
  }
  std::sort(switches.begin(), switches.end());
  switches.erase(std::unique(switches.begin(), switches.end()), switches.end());
  for (const int sw : switches) {
    const int g = sw / SG, s = sw % SG;
    const double out = out_[static_cast<std::size_t>(sw)], in = in_[static_cast<std::size_t>(sw)];
    for (int m = 0; m < SG; ++m) {
      if (m == s) continue;
      if (out > 0) valiant_.add(t.local_link(g, s, m), out * share);
      if (in > 0) valiant_.add(t.local_link(g, m, s), in * share);
    }
    out_[static_cast<std::size_t>(sw)] = in_[static_cast<std::size_t>(sw)] = 0.0;
  }
  // The direct link s -> d is no detour for the pair (s, d): take back its two shares.
  for (const SwitchDemand& d : pairs) valiant_.add(t.local_link(d.from / SG, d.from % SG, d.to % SG), -2.0 * d.weight * share);
}

// Through every other group c in equal shares and every one of its L links each way: the source's
// local hop to the switch of each link a -> c, the link, the local hop in c from each landing
// switch to each departing switch toward b, the link c -> b, the local hop to the destination.
// Aggregated by (source switch, b), (a, b) and (a, destination switch): rings send many flows
// between the same groups.
void TrafficRouter::valiant_between_groups(std::span<const SwitchDemand> pairs) {
  const Topology& t = *topology_;
  const int SG = t.switches_per_group, G = t.groups, L = t.global_links_per_pair;
  const int base = t.switch_vertex(0);
  if (pairs.empty()) return;
  if (G < 3) {
    // No intermediate group: Valiant falls back to the minimal paths (no third group to detour through).
    for (const SwitchDemand& d : pairs) {
      const int a = d.from / SG, b = d.to / SG;
      const double w = d.weight / L;
      for (int k = 0; k < L; ++k) {
        const int g = t.global_link(a, b, k);
        const Link& gl = t.links[static_cast<std::size_t>(g)];
        if (gl.from - base != d.from) valiant_.add(t.local_link(a, d.from % SG, (gl.from - base) % SG), w);
        valiant_.add(g, w);
        if (gl.to - base != d.to) valiant_.add(t.local_link(b, (gl.to - base) % SG, d.to % SG), w);
      }
    }
    return;
  }
  // (switch, group b), (group a, group b), (group a, switch)
  std::vector<SwitchDemand> source, middle, target;
  for (const SwitchDemand& d : pairs) {
    source.push_back({d.from, d.to / SG, d.weight});
    middle.push_back({d.from / SG, d.to / SG, d.weight});
    target.push_back({d.from / SG, d.to, d.weight});
  }
  const auto groups = static_cast<std::size_t>(G), switches = groups * static_cast<std::size_t>(SG);
  merge_pairs(source, switches, groups);
  merge_pairs(middle, groups, groups);
  merge_pairs(target, groups, switches);
  const double per_link = 1.0 / ((G - 2) * static_cast<double>(L));
  const double per_pair = per_link / L;
  for (const SwitchDemand& k : source) {
    const int a = k.from / SG, b = k.to;
    for (int c = 0; c < G; ++c) {
      if (c == a || c == b) continue;
      for (int l = 0; l < L; ++l) {
        const int exit = t.links[static_cast<std::size_t>(t.global_link(a, c, l))].from - base;
        if (exit != k.from) valiant_.add(t.local_link(a, k.from % SG, exit % SG), k.weight * per_link);
      }
    }
  }
  std::vector<int> depart(static_cast<std::size_t>(L));  // switch index in c of each link c -> b
  for (const SwitchDemand& k : middle) {
    for (int c = 0; c < G; ++c) {
      if (c == k.from || c == k.to) continue;
      for (int l2 = 0; l2 < L; ++l2)
        depart[static_cast<std::size_t>(l2)] = (t.links[static_cast<std::size_t>(t.global_link(c, k.to, l2))].from - base) % SG;
      for (int l1 = 0; l1 < L; ++l1) {
        const int g1 = t.global_link(k.from, c, l1);
        valiant_.add(g1, k.weight * per_link);
        const int landing = (t.links[static_cast<std::size_t>(g1)].to - base) % SG;
        for (int l2 = 0; l2 < L; ++l2) {
          const int d = depart[static_cast<std::size_t>(l2)];
          if (d != landing) valiant_.add(t.local_link(c, landing, d), k.weight * per_pair);
        }
      }
      for (int l2 = 0; l2 < L; ++l2) valiant_.add(t.global_link(c, k.to, l2), k.weight * per_link);
    }
  }
  for (const SwitchDemand& k : target) {
    const int b = k.to / SG;
    for (int c = 0; c < G; ++c) {
      if (c == k.from || c == b) continue;
      for (int l = 0; l < L; ++l) {
        const int arrival = t.links[static_cast<std::size_t>(t.global_link(c, b, l))].to - base;
        if (arrival != k.to) valiant_.add(t.local_link(b, arrival % SG, k.to % SG), k.weight * per_link);
      }
    }
  }
}

// One entry per distinct (from, to), sorted by (from, to), each weight summed in the order given:
// rings send many flows between the same switches and groups. A stable counting sort by `from`,
// then per `from` a slot per `to` (no comparison sort of every entry: the routing's hottest part
// before).
void TrafficRouter::merge_pairs(std::vector<SwitchDemand>& v, std::size_t from_count, std::size_t to_count) {
  bucket_start_.assign(from_count + 1, 0);
  for (const SwitchDemand& d : v) {
    WS_CHECK(d.from >= 0 && static_cast<std::size_t>(d.from) < from_count, "a demand's source exists");
    WS_CHECK(d.to >= 0 && static_cast<std::size_t>(d.to) < to_count, "a demand's destination exists");
    ++bucket_start_[static_cast<std::size_t>(d.from) + 1];
  }
  for (std::size_t s = 0; s < from_count; ++s) bucket_start_[s + 1] += bucket_start_[s];
  by_source_.resize(v.size());
  bucket_next_.assign(bucket_start_.begin(), bucket_start_.end() - 1);
  for (const SwitchDemand& d : v) by_source_[bucket_next_[static_cast<std::size_t>(d.from)]++] = d;
  if (slot_of_target_.size() < to_count) slot_of_target_.resize(to_count, -1);
  v.clear();
  for (std::size_t s = 0; s < from_count; ++s) {
    const std::size_t first = v.size();
    for (std::size_t i = bucket_start_[s]; i < bucket_start_[s + 1]; ++i) {
      const SwitchDemand& d = by_source_[i];
      int& slot = slot_of_target_[static_cast<std::size_t>(d.to)];
      if (slot < 0) {
        slot = static_cast<int>(v.size());
        v.push_back(d);
      } else {
        v[static_cast<std::size_t>(slot)].weight += d.weight;
      }
    }
    const auto begin = v.begin() + static_cast<std::ptrdiff_t>(first);
    std::sort(begin, v.end(), [](const SwitchDemand& x, const SwitchDemand& y) { return x.to < y.to; });
    for (auto it = begin; it != v.end(); ++it) slot_of_target_[static_cast<std::size_t>(it->to)] = -1;
  }
}

TrafficLoads TrafficRouter::route(std::span<const TrafficDemand> demands, bool with_valiant) {
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
  out.demand_minimal_latency.assign(demands.size(), Time::zero());
  out.demand_valiant_latency.assign(demands.size(), Time::zero());
  for (std::size_t i = 0; i < demands.size(); ++i) {
    const TrafficDemand& dem = demands[i];
    if (dem.weight <= 0.0 || dem.src_device == dem.dst_device) continue;
    const int na = dem.src_device / dpn, nb = dem.dst_device / dpn;
    const int la = dem.src_device % dpn, lb = dem.dst_device % dpn;
    Time latency;
    if (na == nb) {
      intra_node(fixed_, na, la, lb, dem.weight, latency);
      out.minimal_latency = max(out.minimal_latency, latency);
      out.valiant_latency = max(out.valiant_latency, latency);
      out.demand_minimal_latency[i] = out.demand_valiant_latency[i] = latency;
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
    out.demand_minimal_latency[i] = latency;
    out.demand_valiant_latency[i] = valiant;
  }
  const std::size_t switches = static_cast<std::size_t>(t.groups) * static_cast<std::size_t>(SG);
  merge_pairs(switch_demands_, switches, switches);
  for (const SwitchDemand& d : switch_demands_) minimal_switches(d);
  out.fixed = fixed_.take();
  out.minimal = minimal_.take();
  if (with_valiant) out.valiant = valiant_loads();
  return out;
}

std::vector<LinkShare> TrafficRouter::valiant_loads() {
  const int SG = topology_->switches_per_group;
  std::vector<SwitchDemand> within, between;
  for (const SwitchDemand& d : switch_demands_) (d.from / SG == d.to / SG ? within : between).push_back(d);
  valiant_within_groups(within);
  valiant_between_groups(between);
  return valiant_.take();
}

namespace {

// Calls f(link, weight) for fixed + (1 - v) minimal + v valiant, in link order: a three-way merge
// of lists sorted by link.
template <class F>
void each_mixed_share(const TrafficLoads& loads, double valiant_share, F&& f) {
  const std::span<const LinkShare> lists[3] = {loads.fixed, valiant_share < 1.0 ? loads.minimal : std::span<const LinkShare>{},
                                               valiant_share > 0.0 ? loads.valiant : std::span<const LinkShare>{}};
  const double scale[3] = {1.0, 1.0 - valiant_share, valiant_share};
  std::size_t at[3] = {0, 0, 0};
  for (;;) {
    int link = std::numeric_limits<int>::max();
    for (int i = 0; i < 3; ++i)
      if (at[i] < lists[i].size()) link = std::min(link, lists[i][at[i]].link);
    if (link == std::numeric_limits<int>::max()) break;
    double w = 0.0;
    for (int i = 0; i < 3; ++i) {
      if (at[i] < lists[i].size() && lists[i][at[i]].link == link) w += scale[i] * lists[i][at[i]++].weight;
    }
    f(link, w);
  }
}

}  // namespace

std::vector<LinkShare> mix_routes(const TrafficLoads& loads, double valiant_share) {
  std::vector<LinkShare> out;
  out.reserve(loads.fixed.size() + loads.minimal.size() + loads.valiant.size());
  each_mixed_share(loads, valiant_share, [&](int link, double w) { out.push_back({link, w}); });
  return out;
}

TimePerByte mixed_bottleneck(const TrafficLoads& loads, double valiant_share, std::span<const Bandwidth> capacity) {
  double worst = 0.0;
  each_mixed_share(loads, valiant_share, [&](int link, double w) {
    worst = std::max(worst, w / capacity[static_cast<std::size_t>(link)].bytes_per_s());
  });
  return TimePerByte::from_seconds_per_byte(worst);
}

std::vector<Bandwidth> link_capacities(const Topology& topology, double background_load) {
  std::vector<Bandwidth> c(topology.links.size());
  for (std::size_t l = 0; l < c.size(); ++l) {
    const Link& link = topology.links[l];
    c[l] = link.bandwidth * (link.kind == LinkKind::global ? 1.0 - background_load : 1.0);
  }
  return c;
}

TimePerByte bottleneck(std::span<const LinkShare> shares, std::span<const Bandwidth> capacity) {
  double worst = 0.0;
  for (const LinkShare& s : shares)
    worst = std::max(worst, s.weight / capacity[static_cast<std::size_t>(s.link)].bytes_per_s());
  return TimePerByte::from_seconds_per_byte(worst);
}

double valiant_share(const TrafficLoads& loads, RoutingPolicy policy, std::span<const Bandwidth> capacity) {
  if (policy == RoutingPolicy::minimal || loads.valiant.empty()) return 0.0;
  if (policy == RoutingPolicy::non_minimal) return 1.0;
  // f(v) = max over links of (a + b v) / c is convex and piecewise linear in v.
  const double fixed_worst = bottleneck(loads.fixed, capacity).seconds_per_byte();
  // Only the highest line of each slope can be the maximum: symmetric traffic loads many links
  // alike, so few slopes remain. Per switch-to-switch link the line is (a / c) + (b / c) v; kept
  // here as slope -> highest intercept (a hash, not a sort: the links are many, the slopes few).
  std::unordered_map<double, double> highest;
  {
    std::size_t i = 0, j = 0;
    while (i < loads.minimal.size() || j < loads.valiant.size()) {
      const int li = i < loads.minimal.size() ? loads.minimal[i].link : std::numeric_limits<int>::max();
      const int lj = j < loads.valiant.size() ? loads.valiant[j].link : std::numeric_limits<int>::max();
      const int l = std::min(li, lj);
      const double m = li == l ? loads.minimal[i++].weight : 0.0;
      const double v = lj == l ? loads.valiant[j++].weight : 0.0;
      const double c = capacity[static_cast<std::size_t>(l)].bytes_per_s();
      const auto [it, inserted] = highest.try_emplace((v - m) / c, m / c);
      if (!inserted) it->second = std::max(it->second, m / c);
    }
  }
  const std::vector<std::pair<double, double>> lines(highest.begin(), highest.end());  // (slope, intercept)
  auto f = [&](double v) {
    double worst = fixed_worst;
    for (const auto& [slope, intercept] : lines) worst = std::max(worst, intercept + slope * v);
    return worst;
  };
  // Golden-section search for the minimum of the convex f on [0, 1].
  constexpr double kGolden = 0.6180339887498949;
  double lo = 0.0, hi = 1.0;
  double x1 = hi - kGolden * (hi - lo), x2 = lo + kGolden * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  for (int it = 0; it < 48; ++it) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - kGolden * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + kGolden * (hi - lo);
      f2 = f(x2);
    }
  }
  const double f0 = f(0.0);
  const double best = std::min({f1, f2, f0, f(1.0)});
  if (f0 <= best * (1.0 + 1e-3)) return 0.0;
  // f is non-increasing on [0, optimum]: the smallest share within 0.1% of the best by bisection.
  double a = 0.0, b = f(1.0) <= best * (1.0 + 1e-12) && f(1.0) < std::min(f1, f2) ? 1.0 : 0.5 * (lo + hi);
  for (int it = 0; it < 40; ++it) {
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
