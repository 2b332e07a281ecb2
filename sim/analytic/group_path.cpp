// Model of a group's ring on the machine (all formulas per direction, for large messages):
//
// Intra-node hops. Every rank r sends to its ring successor (the next member in rank order, the
// last member wraps to the first). A hop between two devices of one node takes the direct link,
// else the widest path. All rings of one kind run at once, so each directed link slot is shared
// by the hops routed over it: hop bandwidth = min over its slots of slot_bw / hops_on_slot.
//
// Off-node hops. The hops that leave a node share the node's injection bandwidth
//   nic_bw_node = sum over NICs of min(NIC, endpoint link) * nic large-message efficiency,
// divided by the number of ranks of the node that send off-node at the same time: all D ranks when
// the stride is >= D, otherwise counted exactly from the ring successors of the node's ranks (the
// count repeats with a period of lcm(D, stride*size) ranks, so only that many nodes are visited).
// Assumption: traffic reaches its NIC without loading the intra-node links (GPU-attached NICs).
//
// Dragonfly groups (R = nodes_per_group * D ranks each). With minimal routing a flow from group A
// to group B uses only the global_links_per_group_pair direct links, so
//   global_bw_per_rank = global_links_per_group_pair * global_link_bw / f,
// f = the most ring edges leaving one group for one other group at the same time:
//   stride >= R: the R ranks of a group send to groups at offsets floor(s/R) and floor(s/R)+1,
//                (R - s mod R) and (s mod R) of them, so f = max(R - s mod R, s mod R);
//   stride <  R: rings that span groups leave a group through their last s members: f = s.
// Wrap-around edges travel the opposite direction (another directed pair) and are not added;
// local (intra-group) links are assumed not to be the bottleneck (all-to-all, 31 per switch).
// Non-minimal (Valiant) routing spreads the flows leaving a group over all its global links,
// each flow using two global hops:
//   valiant_bw_per_rank = global_links_per_group_pair * (groups - 1) * global_link_bw / (2 * flows_out)
// with flows_out = min(s, R) flows leaving a group. Adaptive routing takes the better of the two
// (Slingshot biases to minimal paths and diverts when their queues grow, machines.md 1.2).
//
// Node allocation. Contiguous: the job's nodes fill dragonfly groups in order, nodes_per_group
// per group. Scattered: the job's N nodes are spread evenly over the machine's G groups, so a
// group holds q = ceil(N / G) of them (at most nodes_per_group) and everything above uses R = q*D;
// consecutive job nodes never share a switch set. Fewer ranks per group means fewer flows per
// group pair (more global bandwidth per rank) but more rings cross groups (global latency).
//
// Ring bandwidth = min(intra-node hops, NIC share, global share) * library bandwidth_efficiency.
// Step latency = max over hop kinds of: intra-node path latency; NIC latency + 2 endpoint links +
// 1 switch when every ring stays within the nodes of one switch set (assumption: each NIC of a
// node sits on a different switch, so endpoints_per_switch consecutive nodes share a switch set,
// as on Frontier, machines.md 2.2), 2 switches + 1 local link within a dragonfly group, or
// 3 switches + 1 local + 1 global link across groups. Plus the library's step latency.
// A device pair with no route inside the node (disconnected link graph) goes through the NICs.
#include "sim/analytic/group_path.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

namespace ws {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

CollectiveLibrary default_library(const Machine& machine) {
  return machine.collective_libraries.empty() ? CollectiveLibrary{} : machine.collective_libraries.front();
}

}  // namespace

IntraNodeRoutes route_intra_node(const NodeSpec& node) {
  IntraNodeRoutes r;
  const int d = node.devices;
  r.devices = d;
  const auto dn = static_cast<std::size_t>(std::max(d, 0));
  r.route.assign(dn * dn, {});
  const std::size_t slots = 2 * node.links.size();
  r.slot_bandwidth.resize(slots);
  r.slot_latency.resize(slots);
  // Adjacency and the widest direct slot of each ordered pair.
  std::vector<std::vector<std::pair<int, int>>> adjacent(dn);  // (neighbour, slot)
  std::vector<int> direct(dn * dn, -1);
  for (std::size_t i = 0; i < node.links.size(); ++i) {
    const auto& link = node.links[i];
    const int ab = static_cast<int>(2 * i), ba = ab + 1;
    r.slot_bandwidth[2 * i] = r.slot_bandwidth[2 * i + 1] = link.bandwidth;
    r.slot_latency[2 * i] = r.slot_latency[2 * i + 1] = link.latency;
    if (link.device_a < 0 || link.device_b < 0 || link.device_a >= d || link.device_b >= d) continue;
    const auto a = static_cast<std::size_t>(link.device_a), b = static_cast<std::size_t>(link.device_b);
    adjacent[a].emplace_back(link.device_b, ab);
    adjacent[b].emplace_back(link.device_a, ba);
    auto better = [&](int cur, int cand) {
      return cur < 0 || r.slot_bandwidth[static_cast<std::size_t>(cand)] >
                            r.slot_bandwidth[static_cast<std::size_t>(cur)];
    };
    if (better(direct[a * dn + b], ab)) direct[a * dn + b] = ab;
    if (better(direct[b * dn + a], ba)) direct[b * dn + a] = ba;
  }
  // Widest path from each source (Dijkstra on the bottleneck, ties to fewer hops); nodes are small.
  std::vector<double> width(dn);
  std::vector<int> hops(dn), prev(dn), prev_slot(dn);
  std::vector<bool> done(dn);
  for (std::size_t src = 0; src < dn; ++src) {
    std::fill(width.begin(), width.end(), -1.0);
    std::fill(hops.begin(), hops.end(), 0);
    std::fill(prev.begin(), prev.end(), -1);
    std::fill(done.begin(), done.end(), false);
    width[src] = kUnlimited;
    for (;;) {
      int v = -1;
      for (std::size_t u = 0; u < dn; ++u) {
        if (done[u] || width[u] < 0) continue;
        const auto vs = static_cast<std::size_t>(v);
        if (v < 0 || width[u] > width[vs] || (width[u] == width[vs] && hops[u] < hops[vs])) {
          v = static_cast<int>(u);
        }
      }
      if (v < 0) break;
      const auto vs = static_cast<std::size_t>(v);
      done[vs] = true;
      for (const auto& [u, slot] : adjacent[vs]) {
        const auto us = static_cast<std::size_t>(u);
        const double w = std::min(width[vs], r.slot_bandwidth[static_cast<std::size_t>(slot)].bytes_per_s());
        if (!done[us] && (w > width[us] || (w == width[us] && hops[vs] + 1 < hops[us]))) {
          width[us] = w;
          hops[us] = hops[vs] + 1;
          prev[us] = v;
          prev_slot[us] = slot;
        }
      }
    }
    for (std::size_t dst = 0; dst < dn; ++dst) {
      if (dst == src) continue;
      auto& path = r.route[src * dn + dst];
      if (direct[src * dn + dst] >= 0) {
        path.push_back(direct[src * dn + dst]);
      } else if (width[dst] > 0) {
        for (int v = static_cast<int>(dst); v != static_cast<int>(src);
             v = prev[static_cast<std::size_t>(v)]) {
          path.push_back(prev_slot[static_cast<std::size_t>(v)]);
        }
        std::reverse(path.begin(), path.end());
      }
    }
  }
  return r;
}

const char* to_string(NodeAllocation allocation) {
  return allocation == NodeAllocation::scattered ? "scattered" : "contiguous";
}

GroupPath group_path(const Machine& machine, const IntraNodeRoutes& routes, const Layout& layout,
                     GroupKind kind, NodeAllocation allocation) {
  const CollectiveLibrary library = default_library(machine);
  GroupPath g;
  g.kind = kind;
  g.ranks = group_size(layout, kind);
  g.launch_latency = library.launch_latency;
  g.binomial_reductions = collective_family(library) == CollectiveFamily::open_mpi;
  if (g.ranks <= 1) return g;

  const long long s = group_stride(layout, kind);
  const long long p = g.ranks;
  const long long d = std::max(machine.node.devices, 1);
  const long long devices = layout.devices();
  const auto dn = static_cast<std::size_t>(d);
  auto successor = [&](long long r) {
    const long long i = (r / s) % p;
    return i == p - 1 ? r - (p - 1) * s : r + s;
  };

  // Node level: off-node senders per node (max over nodes) and the intra-node hops' bandwidth.
  long long off_senders = 0;
  double intra_bw = kUnlimited;
  Time intra_latency;
  if (s >= d || routes.devices != d) {
    off_senders = std::min(d, devices);
  } else {
    const long long period_nodes = std::lcm(d, s * p) / d;
    const long long nodes_used = (devices + d - 1) / d;
    std::vector<int> load(routes.slot_bandwidth.size(), 0);
    std::vector<std::size_t> hops;  // route indices of this node's intra-node hops
    hops.reserve(dn);
    for (long long node = 0; node < std::min(period_nodes, nodes_used); ++node) {
      long long off = 0;
      hops.clear();
      for (long long j = 0; j < d; ++j) {
        const long long r = node * d + j;
        if (r >= devices) break;
        const long long t = successor(r);
        const auto route_index = static_cast<std::size_t>(j) * dn + static_cast<std::size_t>(t % d);
        if (t / d != node || routes.route[route_index].empty()) {
          ++off;
          continue;
        }
        hops.push_back(route_index);
        for (int slot : routes.route[route_index]) ++load[static_cast<std::size_t>(slot)];
      }
      off_senders = std::max(off_senders, off);
      for (const auto& hop : hops) {
        Time latency;
        for (int slot : routes.route[hop]) {
          const auto ss = static_cast<std::size_t>(slot);
          intra_bw = std::min(intra_bw, routes.slot_bandwidth[ss].bytes_per_s() / load[ss]);
          latency += routes.slot_latency[ss];
        }
        intra_latency = max(intra_latency, latency);
      }
      for (const auto& hop : hops) {
        for (int slot : routes.route[hop]) load[static_cast<std::size_t>(slot)] = 0;
      }
    }
  }

  double bw = intra_bw;
  Time latency = intra_latency;
  g.where = "intra-node";
  if (off_senders > 0) {
    const auto& net = machine.network;
    double node_injection = 0;
    Time nic_latency;
    for (const auto& nic : machine.node.nics) {
      double nic_bw = nic.bandwidth.bytes_per_s();
      if (net.endpoint_link_bandwidth.bytes_per_s() > 0) {
        nic_bw = std::min(nic_bw, net.endpoint_link_bandwidth.bytes_per_s());
      }
      node_injection += nic_bw;
      nic_latency = max(nic_latency, nic.latency);
    }
    node_injection *= machine.node.nic_efficiency.large_message_efficiency;
    bw = std::min(bw, node_injection / static_cast<double>(off_senders));
    g.where = "inter-node";

    long long job_nodes_per_group = net.nodes_per_group;
    if (allocation == NodeAllocation::scattered && net.groups > 0) {
      const long long job_nodes = (devices + d - 1) / d;
      job_nodes_per_group = std::clamp((job_nodes + net.groups - 1) / net.groups, 1LL,
                                       static_cast<long long>(net.nodes_per_group));
    }
    const long long per_group = job_nodes_per_group * d;
    bool crosses_groups = false;
    if (per_group > 0 && devices > per_group && (s * p > per_group || per_group % (s * p) != 0)) {
      crosses_groups = true;
      const long long rem = s % per_group;
      long long f = s >= per_group ? std::max(per_group - rem, rem) : s;
      f = std::max(1LL, std::min(f, per_group));
      const double link_bw = net.global_link_bandwidth.bytes_per_s();
      const double minimal_bw = net.global_links_per_group_pair * link_bw / static_cast<double>(f);
      // Valiant: every flow leaving a group may take any of the group's global links to an
      // intermediate group, then a second global hop, so each group's links carry its own first
      // hops plus others' second hops (factor 2). Flows leaving one group: R when s >= R, else s.
      const double flows_out = static_cast<double>(std::min(s, per_group));
      const double group_links = static_cast<double>(net.global_links_per_group_pair) * (net.groups - 1);
      const double valiant_bw = group_links * link_bw / (2.0 * flows_out);
      double global_bw = minimal_bw;
      if (net.routing == RoutingPolicy::non_minimal) global_bw = valiant_bw;
      // Adaptive routing takes the non-minimal paths only when they beat the minimal ones.
      if (net.routing == RoutingPolicy::adaptive) global_bw = std::max(minimal_bw, valiant_bw);
      bw = std::min(bw, global_bw);
      g.where = "inter-group";
    }
    // Rings whose nodes all hang off one set of switches (endpoints_per_switch nodes, each NIC of a
    // node on a different switch) cross 1 switch; else 2 switches and a local link within a
    // dragonfly group, 3 switches, a local and a global link across groups.
    const long long per_switch = std::max(net.endpoints_per_switch, 1) * d;
    const bool one_switch = allocation == NodeAllocation::contiguous && !crosses_groups && s * p <= per_switch &&
                            per_switch % (s * p) == 0;
    Time network_latency = nic_latency + 2 * net.endpoint_link_latency;
    if (crosses_groups) {
      network_latency += 3 * net.switch_latency + net.local_link_latency + net.global_link_latency;
    } else if (one_switch) {
      network_latency += net.switch_latency;
    } else {
      network_latency += 2 * net.switch_latency + net.local_link_latency;
    }
    latency = max(latency, network_latency);
  }
  assert(bw > 0 && std::isfinite(bw));  // the loader guarantees NICs and a connected node
  g.bandwidth = Bandwidth::from_bytes_per_s(bw * library.bandwidth_efficiency);
  g.step_latency = latency + library.step_latency;
  return g;
}

GroupPath group_path(const Machine& machine, const Layout& layout, GroupKind kind, NodeAllocation allocation) {
  return group_path(machine, route_intra_node(machine.node), layout, kind, allocation);
}

Time collective_time(CollectiveOp op, const GroupPath& path, double full_bytes) {
  if (path.ranks <= 1) return Time::zero();
  const Time algorithm = path.binomial_reductions
                             ? binomial_collective_time(op, path.ranks, full_bytes, path.bandwidth, path.step_latency)
                             : ring_collective_time(op, path.ranks, full_bytes, path.bandwidth, path.step_latency);
  return path.launch_latency + algorithm;
}

}  // namespace ws
