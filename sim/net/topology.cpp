// Construction of the dragonfly topology.
#include "sim/net/topology.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ws {

namespace {

int add_link(Topology& t, int from, int to, LinkKind kind, Bandwidth bw, Time latency) {
  const int id = static_cast<int>(t.links.size());
  t.links.push_back(Link{from, to, kind, bw, latency});
  boost::add_edge(static_cast<std::size_t>(from), static_cast<std::size_t>(to), LinkRef{id}, t.graph);
  return id;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("build_topology: " + what);
}

// The devices a message from `a` visits inside the node on its way to every other device: the
// fewest hops, and among those the widest route (the largest smallest link bandwidth), the lowest
// device index on ties at each hop. A breadth-first search whose layers carry that width; for two
// hops this is the widest intermediate device. Appends the routes of source `a` to the tables.
void add_routes_from(Topology& t, const std::vector<std::vector<int>>& neighbours, const std::vector<double>& bw, int a) {
  const int n = t.devices_per_node;
  std::vector<int> hops(static_cast<std::size_t>(n), -1), previous(static_cast<std::size_t>(n), -1);
  std::vector<double> width(static_cast<std::size_t>(n), 0.0);
  hops[static_cast<std::size_t>(a)] = 0;
  width[static_cast<std::size_t>(a)] = std::numeric_limits<double>::infinity();
  std::vector<int> layer{a};
  while (!layer.empty()) {
    std::vector<int> next;
    // Each device of the next layer takes its widest predecessor of this layer; the layer is in
    // ascending device order, so strict > keeps the lowest index on ties.
    std::sort(layer.begin(), layer.end());
    for (const int u : layer) {
      for (const int v : neighbours[static_cast<std::size_t>(u)]) {
        const auto vi = static_cast<std::size_t>(v);
        if (hops[vi] >= 0 && hops[vi] <= hops[static_cast<std::size_t>(u)]) continue;
        if (hops[vi] < 0) {
          hops[vi] = hops[static_cast<std::size_t>(u)] + 1;
          next.push_back(v);
        }
        const double w = std::min(width[static_cast<std::size_t>(u)], bw[static_cast<std::size_t>(u * n + v)]);
        if (w > width[vi]) {
          width[vi] = w;
          previous[vi] = u;
        }
      }
    }
    layer = std::move(next);
  }
  std::vector<int> route;
  for (int b = 0; b < n; ++b) {
    t.intra_route_begin[static_cast<std::size_t>(a * n + b)] = static_cast<int>(t.intra_hops.size());
    if (b == a) continue;
    require(hops[static_cast<std::size_t>(b)] > 0,
            "no intra-node route from device " + std::to_string(a) + " to device " + std::to_string(b));
    route.clear();
    for (int v = b; v != a; v = previous[static_cast<std::size_t>(v)]) route.push_back(v);
    t.intra_hops.insert(t.intra_hops.end(), route.rbegin(), route.rend());
  }
}

}  // namespace

namespace {

// Intra-node links: node-major so that link id = base + node * intra_links_per_node.
// Returns the summed bandwidth of each device pair (0: no direct link), which the NIC choice uses.
std::vector<double> add_intra_node_links(Topology& t, const NodeSpec& node, int nodes) {
  const int dpn = node.devices;
  const auto pairs = static_cast<std::size_t>(dpn * dpn);
  t.intra_link.assign(pairs, -1);
  std::vector<double> bw(pairs, 0.0);
  for (const IntraNodeLink& l : node.links) {
    require(l.device_a >= 0 && l.device_a < dpn && l.device_b >= 0 && l.device_b < dpn && l.device_a != l.device_b,
            "intra-node link device out of range");
    bw[static_cast<std::size_t>(l.device_a * dpn + l.device_b)] += l.bandwidth.bytes_per_s();
    bw[static_cast<std::size_t>(l.device_b * dpn + l.device_a)] += l.bandwidth.bytes_per_s();
  }
  for (int n = 0; n < nodes; ++n) {
    int count = 0;
    for (int a = 0; a < dpn; ++a) {
      for (int b = 0; b < dpn; ++b) {
        const double w = bw[static_cast<std::size_t>(a * dpn + b)];
        if (w <= 0.0) continue;
        Time lat;
        for (const IntraNodeLink& l : node.links) {
          if ((l.device_a == a && l.device_b == b) || (l.device_a == b && l.device_b == a)) lat = l.latency;
        }
        const int id = add_link(t, n * dpn + a, n * dpn + b, LinkKind::intra_node, Bandwidth::from_bytes_per_s(w), lat);
        if (n == 0) t.intra_link[static_cast<std::size_t>(a * dpn + b)] = id;
        ++count;
      }
    }
    t.intra_links_per_node = count;
  }
  std::vector<std::vector<int>> neighbours(static_cast<std::size_t>(dpn));
  for (int a = 0; a < dpn; ++a) {
    for (int b = 0; b < dpn; ++b) {
      if (bw[static_cast<std::size_t>(a * dpn + b)] > 0.0) neighbours[static_cast<std::size_t>(a)].push_back(b);
    }
  }
  t.intra_hops.clear();
  t.intra_route_begin.assign(pairs + 1, 0);
  for (int a = 0; a < dpn; ++a) add_routes_from(t, neighbours, bw, a);
  t.intra_route_begin[pairs] = static_cast<int>(t.intra_hops.size());
  return bw;
}

// NIC used by each device: the one attached to it, else one reachable inside the node (round robin).
void choose_device_nics(Topology& t, const NodeSpec& node, const std::vector<double>& bw) {
  const int dpn = node.devices;
  t.nic_of_device.assign(static_cast<std::size_t>(dpn), -1);
  for (int k = 0; k < t.nics_per_node; ++k) {
    const int dev = node.nics[static_cast<std::size_t>(k)].attached_device;
    require(dev >= 0 && dev < dpn, "NIC attached_device out of range");
    if (t.nic_of_device[static_cast<std::size_t>(dev)] < 0) t.nic_of_device[static_cast<std::size_t>(dev)] = k;
  }
  // A device without its own NIC borrows the NIC of its widest-connected neighbour (Frontier: the
  // sibling GCD on the same OAM), lowest NIC index on ties; without any direct neighbour with a NIC,
  // NIC (device mod NICs), reached through the intra-node graph.
  for (int d = 0; d < dpn; ++d) {
    if (t.nic_of_device[static_cast<std::size_t>(d)] >= 0) continue;
    int best = d % t.nics_per_node;
    double best_bw = 0.0;
    for (int k = 0; k < t.nics_per_node; ++k) {
      const double w = bw[static_cast<std::size_t>(d * dpn + node.nics[static_cast<std::size_t>(k)].attached_device)];
      if (w > best_bw) {
        best_bw = w;
        best = k;
      }
    }
    t.nic_of_device[static_cast<std::size_t>(d)] = best;
  }
}

// NICs: injection link device <-> NIC carries the NIC rate and half its latency each way, so that a
// message pays the NIC latency once (injection + ejection); the endpoint link NIC <-> switch.
void add_nic_links(Topology& t, const NodeSpec& node, const DragonflySpec& net, int nodes) {
  const int dpn = node.devices, N = nodes * t.nics_per_node;
  t.injection_up.resize(static_cast<std::size_t>(N));
  t.injection_down.resize(static_cast<std::size_t>(N));
  t.endpoint_up.resize(static_cast<std::size_t>(N));
  t.endpoint_down.resize(static_cast<std::size_t>(N));
  t.switch_of_nic.resize(static_cast<std::size_t>(N));
  for (int n = 0; n < nodes; ++n) {
    const int g = n / t.nodes_per_group, j = n % t.nodes_per_group;
    for (int k = 0; k < t.nics_per_node; ++k) {
      const Nic& nic = node.nics[static_cast<std::size_t>(k)];
      const int id = n * t.nics_per_node + k;
      const int dev = n * dpn + nic.attached_device;
      // Striped (nodes_per_switch 0): consecutive NICs on consecutive switches, so a node's NICs
      // never share a switch. Blocked: NIC k of a block's nodes on the block's k-th switch.
      const int B = net.nodes_per_switch;
      const int local = B > 0 ? (j / B) * t.nics_per_node + k : (j * t.nics_per_node + k) % t.switches_per_group;
      const int sw = g * t.switches_per_group + local;
      const Time half = Time::from_ps(nic.latency.ps() / 2);
      t.switch_of_nic[static_cast<std::size_t>(id)] = sw;
      t.injection_up[static_cast<std::size_t>(id)] = add_link(t, dev, t.nic_vertex(id), LinkKind::injection, nic.bandwidth, half);
      t.injection_down[static_cast<std::size_t>(id)] =
          add_link(t, t.nic_vertex(id), dev, LinkKind::injection, nic.bandwidth, nic.latency - half);
      t.endpoint_up[static_cast<std::size_t>(id)] = add_link(t, t.nic_vertex(id), t.switch_vertex(sw), LinkKind::endpoint,
                                                              net.endpoint_link_bandwidth, net.endpoint_link_latency);
      t.endpoint_down[static_cast<std::size_t>(id)] = add_link(t, t.switch_vertex(sw), t.nic_vertex(id), LinkKind::endpoint,
                                                                net.endpoint_link_bandwidth, net.endpoint_link_latency);
    }
  }
}

// Local links: all-to-all inside each group.
void add_local_links(Topology& t, const DragonflySpec& net) {
  const int SG = t.switches_per_group;
  t.local_links.assign(static_cast<std::size_t>(t.groups * SG * SG), -1);
  for (int g = 0; g < t.groups; ++g) {
    for (int s = 0; s < SG; ++s) {
      for (int u = 0; u < SG; ++u) {
        if (s == u) continue;
        t.local_links[static_cast<std::size_t>((g * SG + s) * SG + u)] =
            add_link(t, t.switch_vertex(g * SG + s), t.switch_vertex(g * SG + u), LinkKind::local,
                     net.local_link_bandwidth, net.local_link_latency);
      }
    }
  }
}

// Global links: L per group pair. Group g numbers its peers h != g over the whole machine; link k to
// peer h uses port (peer rank * L + k), on switch (port mod S) so one pair's links spread over
// switches. Where ports run short the switches are reused (more cables per switch than ports).
void add_global_links(Topology& t, const DragonflySpec& net) {
  const int SG = t.switches_per_group;
  const int L = t.global_links_per_pair;
  t.global_links.assign(static_cast<std::size_t>(t.groups * t.groups * std::max(L, 1)), -1);
  auto port_switch = [&](int g, int h, int k) {
    const int peer = h < g ? h : h - 1;
    return g * SG + (peer * L + k) % SG;
  };
  for (int g = 0; g < t.groups; ++g) {
    for (int h = g + 1; h < t.groups; ++h) {
      for (int k = 0; k < L; ++k) {
        const int sg = port_switch(g, h, k), sh = port_switch(h, g, k);
        t.global_links[static_cast<std::size_t>((g * t.groups + h) * L + k)] =
            add_link(t, t.switch_vertex(sg), t.switch_vertex(sh), LinkKind::global, net.global_link_bandwidth,
                     net.global_link_latency);
        t.global_links[static_cast<std::size_t>((h * t.groups + g) * L + k)] =
            add_link(t, t.switch_vertex(sh), t.switch_vertex(sg), LinkKind::global, net.global_link_bandwidth,
                     net.global_link_latency);
      }
    }
  }
}

}  // namespace

Topology build_topology(const Machine& machine, int nodes, int groups) {
  const NodeSpec& node = machine.node;
  const DragonflySpec& net = machine.network;
  require(nodes >= 1 && nodes <= machine.nodes, "nodes must be in [1, machine.nodes]");
  require(node.devices >= 1, "node.devices must be >= 1");
  require(!node.nics.empty(), "a node needs at least one NIC");
  require(net.switches_per_group >= 1 && net.nodes_per_group >= 1, "dragonfly shape must be positive");
  require(static_cast<int>(node.nics.size()) <= net.switches_per_group,
          "a node's NICs must sit on different switches of its group");
  require(net.global_links_per_group_pair >= 1 || net.groups <= 1, "global_links_per_group_pair must be >= 1");

  Topology t;
  t.nodes = nodes;
  t.devices_per_node = node.devices;
  t.nics_per_node = static_cast<int>(node.nics.size());
  t.switches_per_group = net.switches_per_group;
  t.nodes_per_group = net.nodes_per_group;
  t.machine_groups = std::max(net.groups, 1);
  t.groups = std::max((nodes + net.nodes_per_group - 1) / net.nodes_per_group, groups);
  require(t.groups <= t.machine_groups, "more groups than the machine has");
  t.switch_latency = net.switch_latency;
  t.global_links_per_pair = net.global_links_per_group_pair;

  const int D = t.devices(), N = nodes * t.nics_per_node, S = t.groups * t.switches_per_group;
  t.graph = TopologyGraph(static_cast<std::size_t>(D + N + S));
  for (int d = 0; d < D; ++d) t.graph[static_cast<std::size_t>(d)] = {VertexKind::device, d};
  for (int i = 0; i < N; ++i) t.graph[static_cast<std::size_t>(t.nic_vertex(i))] = {VertexKind::nic, i};
  for (int s = 0; s < S; ++s) t.graph[static_cast<std::size_t>(t.switch_vertex(s))] = {VertexKind::network_switch, s};

  const std::vector<double> bw = add_intra_node_links(t, node, nodes);
  choose_device_nics(t, node, bw);
  add_nic_links(t, node, net, nodes);
  add_local_links(t, net);
  add_global_links(t, net);
  return t;
}

}  // namespace ws
