// Small Machine descriptions built in code for network and collective tests (no YAML needed).
#pragma once

#include "sim/machine/machine.hpp"

namespace ws::testing {

// A dragonfly of `groups` groups, `switches` switches and `nodes_per_group` nodes per group;
// each node has `devices` devices all-to-all at 100 GB/s and `nics` NICs of 25 GB/s, NIC k on device k.
inline Machine small_machine(int groups, int switches, int nodes_per_group, int devices, int nics,
                             int global_links_per_pair, double fabric_gbps = 200.0, double global_gbps = 200.0) {
  using namespace ws::literals;
  Machine m;
  m.name = "test";
  m.nodes = groups * nodes_per_group;
  m.node.devices = devices;
  for (int a = 0; a < devices; ++a) {
    for (int b = a + 1; b < devices; ++b) m.node.links.push_back({a, b, 100_GBps, 200_ns});
  }
  for (int k = 0; k < nics; ++k) m.node.nics.push_back({k % devices, 25_GBps, 1000_ns});
  DragonflySpec& n = m.network;
  n.groups = groups;
  n.switches_per_group = switches;
  n.nodes_per_group = nodes_per_group;
  n.ports_per_switch = 64;
  n.endpoints_per_switch = 16;
  n.global_ports_per_switch = 16;
  n.global_links_per_group_pair = global_links_per_pair;
  n.endpoint_link_bandwidth = Bandwidth::from_gbps(fabric_gbps);
  n.local_link_bandwidth = Bandwidth::from_gbps(fabric_gbps);
  n.global_link_bandwidth = Bandwidth::from_gbps(global_gbps);
  n.endpoint_link_latency = 50_ns;
  n.local_link_latency = 60_ns;
  n.global_link_latency = 500_ns;
  n.switch_latency = 350_ns;
  n.routing = RoutingPolicy::minimal;
  m.collective_libraries.push_back({"test-lib", 10_us, 2_us, 1.0});
  return m;
}

}  // namespace ws::testing
