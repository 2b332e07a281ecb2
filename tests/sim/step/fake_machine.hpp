// A small machine built in code for the analytic tests: 4 devices per node joined all-to-all,
// 2 NICs per node, a dragonfly of 2-node groups. Round numbers so that closed forms are exact.
#pragma once

#include "sim/machine/machine.hpp"

namespace ws::testing {

inline Machine fake_machine(int nodes = 8) {
  using namespace ws::literals;
  Machine m;
  m.name = "fake";
  m.nodes = nodes;
  m.device.name = "fake-gpu";
  m.device.peak_bf16 = 100_TFLOPS;
  m.device.peak_fp16 = 100_TFLOPS;
  m.device.peak_fp32 = 25_TFLOPS;
  m.device.memory_capacity_bytes = 64_GiB;
  m.device.memory_bandwidth = 1000_GBps;
  m.device.gemm.samples = {{1024, 1024, 1024, 0.8}};
  m.node.devices = 4;
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) m.node.links.push_back({a, b, 100_GBps, 1_us});
  }
  m.node.nics = {{0, 25_GBps, 2_us}, {2, 25_GBps, 2_us}};
  m.node.nic_efficiency = {1.0, 8_KiB};
  m.network.groups = (nodes + 1) / 2;
  m.network.switches_per_group = 2;
  m.network.ports_per_switch = 16;
  m.network.endpoints_per_switch = 4;
  m.network.global_ports_per_switch = 4;
  m.network.global_links_per_group_pair = 1;
  m.network.nodes_per_group = 2;
  m.network.endpoint_link_bandwidth = 25_GBps;
  m.network.local_link_bandwidth = 25_GBps;
  m.network.global_link_bandwidth = 25_GBps;
  m.network.endpoint_link_latency = 100_ns;
  m.network.local_link_latency = 100_ns;
  m.network.global_link_latency = 500_ns;
  m.network.switch_latency = 350_ns;
  m.collective_libraries = {{"fake-ccl", 5_us, 1_us, 1.0}};
  return m;
}

// Every bandwidth of the machine (links, NICs, endpoint/local/global links) times `factor`.
inline Machine scale_bandwidths(Machine m, double factor) {
  for (auto& l : m.node.links) l.bandwidth = l.bandwidth * factor;
  for (auto& n : m.node.nics) n.bandwidth = n.bandwidth * factor;
  m.network.endpoint_link_bandwidth = m.network.endpoint_link_bandwidth * factor;
  m.network.local_link_bandwidth = m.network.local_link_bandwidth * factor;
  m.network.global_link_bandwidth = m.network.global_link_bandwidth * factor;
  return m;
}

}  // namespace ws::testing
