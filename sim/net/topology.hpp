// The network graph of a Slingshot machine built from its Machine description: devices,
// directed intra-node links, NICs, dragonfly switches with endpoint / local / global links.
// Boost.Graph holds the structure; a flat array of directed links indexed by int is what the
// router and the flow solver use (cheap to index, no pointers).
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <span>
#include <vector>

#include "base/units.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

enum class VertexKind : std::uint8_t { device, nic, network_switch };
enum class LinkKind : std::uint8_t { intra_node, injection, endpoint, local, global };

struct TopologyVertex {
  VertexKind kind = VertexKind::device;
  int index = 0;  // within its kind: global device id, global NIC id, global switch id
};

// One direction of a physical link. Bandwidth is per direction, as in the machine file.
struct Link {
  int from = 0;  // vertex ids
  int to = 0;
  LinkKind kind = LinkKind::intra_node;
  Bandwidth bandwidth;
  Time latency;
};

// Edge property: the index of the directed link in Topology::links.
struct LinkRef {
  int link = -1;
};
using TopologyGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                            TopologyVertex, LinkRef>;

// Vertex numbering: devices [0, D), NICs [D, D + N), switches [D + N, D + N + S).
// Devices are numbered node * devices_per_node + local index (rank order within a node).
struct Topology {
  int nodes = 0;
  int groups = 0;
  int machine_groups = 0;  // groups of the whole machine (global-port assignment depends on it)
  int devices_per_node = 0;
  int nics_per_node = 0;
  int switches_per_group = 0;
  int nodes_per_group = 0;
  Time switch_latency;

  TopologyGraph graph;
  std::vector<Link> links;

  // Lookup tables (link ids, -1 where absent).
  std::vector<int> intra_link;      // [local a * dpn + local b], link ids of node 0 offset per node
  // Intra-node routes: the local devices a message from a visits after a, ending with b, at
  // intra_hops[intra_route_begin[a * dpn + b] .. intra_route_begin[a * dpn + b + 1]).
  std::vector<int> intra_hops;
  std::vector<int> intra_route_begin;  // dpn * dpn + 1 offsets
  std::vector<int> nic_of_device;   // [local device] -> local NIC index it uses (own, else widest neighbour's)
  std::vector<int> injection_up;    // [global NIC]: device -> NIC
  std::vector<int> injection_down;  // [global NIC]: NIC -> device
  std::vector<int> endpoint_up;     // [global NIC]: NIC -> switch
  std::vector<int> endpoint_down;   // [global NIC]: switch -> NIC
  std::vector<int> switch_of_nic;   // [global NIC] -> global switch id
  std::vector<int> local_links;     // [group][s][t] -> link s -> t (s != t)
  std::vector<int> global_links;    // [g * groups + h][k] -> link k from group g to group h
  int global_links_per_pair = 0;
  int intra_links_per_node = 0;     // directed intra-node links per node

  int devices() const { return nodes * devices_per_node; }
  int device_vertex(int device) const { return device; }
  int nic_vertex(int nic) const { return devices() + nic; }
  int switch_vertex(int sw) const { return devices() + nodes * nics_per_node + sw; }
  int node_of_device(int device) const { return device / devices_per_node; }
  int group_of_node(int node) const { return node / nodes_per_group; }
  int group_of_switch(int sw) const { return sw / switches_per_group; }
  // Directed intra-node link between two devices of one node, or -1.
  // Inline: routing looks links up for every hop of every demand.
  int intra_node_link(int node, int local_a, int local_b) const {
    const int base = intra_link[static_cast<std::size_t>(local_a * devices_per_node + local_b)];
    return base < 0 ? -1 : base + node * intra_links_per_node;
  }
  int local_link(int group, int s, int t) const {  // s, t: switch index within the group
    const auto S = static_cast<std::size_t>(switches_per_group);
    return local_links[static_cast<std::size_t>(group) * S * S + static_cast<std::size_t>(s) * S +
                       static_cast<std::size_t>(t)];
  }
  int global_link(int g, int h, int k) const {
    const auto idx = (static_cast<std::size_t>(g) * static_cast<std::size_t>(groups) + static_cast<std::size_t>(h)) *
                         static_cast<std::size_t>(global_links_per_pair) +
                     static_cast<std::size_t>(k);
    return global_links[idx];
  }
  bool is_switch_vertex(int v) const { return v >= switch_vertex(0); }
  // The route from local device a to local device b of a node: the devices after a, b last
  // (empty when a == b). Fewest hops first, then the widest; every connected node has one.
  std::span<const int> intra_route(int local_a, int local_b) const {
    const auto pair = static_cast<std::size_t>(local_a * devices_per_node + local_b);
    const auto begin = static_cast<std::size_t>(intra_route_begin[pair]);
    return {intra_hops.data() + begin, static_cast<std::size_t>(intra_route_begin[pair + 1]) - begin};
  }
};

// Builds the first `nodes` nodes of the machine and the groups that hold them, plus extra groups
// up to `groups` (0: only those needed; more gives Valiant routing intermediate groups).
// Throws std::invalid_argument where the machine cannot be built (e.g. nodes > machine.nodes).
Topology build_topology(const Machine& machine, int nodes, int groups = 0);

}  // namespace ws
