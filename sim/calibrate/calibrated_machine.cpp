#include "sim/calibrate/calibrated_machine.hpp"

#include <algorithm>

namespace ws {

CalibratedFigures derive_figures(const Calibration& c) {
  CalibratedFigures f;
  const double derived = c.host.fp32_peak_flops();
  const double measured = c.gemm.best_flops();
  f.peak_fp32_flops = std::max(derived, measured);
  f.peak_from_measurement = !(derived >= measured);
  const int cores = std::max(c.memory.threads, 1);
  f.memory_bandwidth_per_core = c.memory.all_cores_bytes_per_s / cores;
  f.memory_capacity_per_core = c.host.memory_bytes / std::max(c.host.cores, 1);
  f.link = fit_alpha_beta(c.mpi.ping_pong);
  f.ring = fit_ring_collectives(c.mpi.collectives);
  f.library_step_latency = max(f.ring.step_latency - f.link.latency, Time::zero());
  const double efficiency = f.ring.ring_bandwidth.bytes_per_s() / f.link.bandwidth.bytes_per_s();
  f.efficiency_clamped = efficiency > 1.0;
  f.library_bandwidth_efficiency = std::min(efficiency, 1.0);
  return f;
}

Machine calibrated_machine(const Calibration& c) {
  const CalibratedFigures f = derive_figures(c);
  Machine m;
  m.name = c.machine_name;
  m.nodes = 1;
  m.device.name = c.host.cpu_model.empty() ? "CPU core" : c.host.cpu_model + " core";
  m.device.peak_fp32 = FlopRate::from_flops(f.peak_fp32_flops);
  m.device.peak_bf16 = m.device.peak_fp32;  // see the writer: no bf16/fp16 units are counted
  m.device.peak_fp16 = m.device.peak_fp32;
  m.device.memory_capacity_bytes = f.memory_capacity_per_core;
  m.device.memory_bandwidth = Bandwidth::from_bytes_per_s(f.memory_bandwidth_per_core);
  for (const auto& r : c.gemm.rates) {
    m.device.gemm.samples.push_back(GemmEfficiencySample{static_cast<double>(r.m), static_cast<double>(r.n),
                                                         static_cast<double>(r.k),
                                                         std::min(r.best_flops() / f.peak_fp32_flops, 1.0)});
  }

  m.node.devices = std::max(c.mpi.ranks, 1);
  for (int a = 0; a < m.node.devices; ++a) {
    for (int b = a + 1; b < m.node.devices; ++b) {
      m.node.links.push_back(IntraNodeLink{a, b, f.link.bandwidth, f.link.latency});
    }
  }
  m.node.nics.push_back(Nic{0, f.link.bandwidth, f.link.latency});
  // The alpha-beta model reaches half its bandwidth at alpha x beta bytes.
  m.node.nic_efficiency.large_message_efficiency = 1.0;
  m.node.nic_efficiency.half_bandwidth_bytes = f.link.latency.seconds() * f.link.bandwidth.bytes_per_s();

  DragonflySpec& net = m.network;
  net.groups = 1;
  net.switches_per_group = 1;
  net.ports_per_switch = 1;
  net.endpoints_per_switch = 1;
  net.global_ports_per_switch = 0;
  net.global_links_per_group_pair = 0;
  net.nodes_per_group = 1;
  net.endpoint_link_bandwidth = net.local_link_bandwidth = net.global_link_bandwidth = f.link.bandwidth;
  net.endpoint_link_latency = net.local_link_latency = net.global_link_latency = Time::zero();
  net.switch_latency = Time::zero();
  net.routing = RoutingPolicy::minimal;

  m.collective_libraries.push_back(
      CollectiveLibrary{"openmpi", f.ring.launch_latency, f.library_step_latency, f.library_bandwidth_efficiency});
  return m;
}

}  // namespace ws
