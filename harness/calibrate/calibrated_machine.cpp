#include "harness/calibrate/calibrated_machine.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/statistics.hpp"
#include "sim/compute/gemm_efficiency.hpp"

namespace ws {

namespace {

// The calibrated core's GEMM table: efficiency = best measured rate / peak.
GemmEfficiencyTable gemm_table(const Calibration& c, double peak_fp32_flops) {
  std::vector<GemmEfficiencySample> samples;
  for (const auto& r : c.gemm.rates) {
    samples.push_back(GemmEfficiencySample{static_cast<double>(r.m), static_cast<double>(r.n),
                                           static_cast<double>(r.k),
                                           std::min(r.best_flops() / peak_fp32_flops, 1.0)});
  }
  return make_gemm_table(std::move(samples));  // as loading the written file would give
}

// The GEMMs of the attention kernel at the probe's shape, as the step schedule lists them
// (engine/schedule/step_schedule.cpp): Q K^T and P V forward; dP, dV, dQ, dK backward.
double attention_gemm_seconds(const DeviceSpec& device, const ElementwiseShapes& s, bool backward) {
  const double seq = s.attention_seq, d = s.attention_head_dim,
               count = static_cast<double>(s.attention_sequences) * s.attention_heads;
  const double qk = gemm_time(device, Precision::fp32, seq, seq, d).seconds();
  const double pv = gemm_time(device, Precision::fp32, seq, d, seq).seconds();
  return count * (backward ? qk + 3 * pv : qk + pv);
}

void derive_elementwise(const Calibration& c, CalibratedFigures& f) {
  if (c.gemm.rates.empty()) return;
  DeviceSpec device;
  device.peak_fp32 = FlopRate::from_flops(f.peak_fp32_flops);
  device.gemm = gemm_table(c, f.peak_fp32_flops);
  for (int i = 0; i < kElementwiseKernels; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const auto kernel = static_cast<ElementwiseKernel>(i);
    double seconds = c.elementwise.seconds[k];
    if (kernel == ElementwiseKernel::softmax_forward || kernel == ElementwiseKernel::softmax_backward) {
      f.attention_gemm_seconds[k] =
          attention_gemm_seconds(device, c.elementwise.shapes, kernel == ElementwiseKernel::softmax_backward);
      seconds = seconds - f.attention_gemm_seconds[k] >= 0.05 * seconds ? seconds - f.attention_gemm_seconds[k] : 0;
    }
    if (seconds > 0 && c.elementwise.elements[k] > 0) f.elementwise_per_s[k] = c.elementwise.elements[k] / seconds;
  }
}

}  // namespace

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
  // The file's library is "openmpi": its collectives are priced as Open MPI's non-blocking ones
  // (binomial all-reduce and reduce-scatter), which is what the probe times and the engine calls.
  f.ring = fit_ring_collectives(c.mpi.collectives,
                                collective_family(CollectiveLibrary{kCalibratedLibrary, {}, {}, 1.0, {}}) ==
                                    CollectiveFamily::open_mpi);
  f.library_step_latency = max(f.ring.step_latency - f.link.latency, Time::zero());
  const double efficiency = f.ring.ring_bandwidth.bytes_per_s() / f.link.bandwidth.bytes_per_s();
  f.efficiency_clamped = efficiency > 1.0;
  f.library_bandwidth_efficiency = std::min(efficiency, 1.0);
  derive_elementwise(c, f);
  return f;
}

SynchronizingVariability synchronizing_variability(const CoreVariability& v) {
  SynchronizingVariability out{v.speed_spread(), v.noise()};
  const double e_max = expected_max_of_normals(v.threads);
  if (v.threads < 2 || e_max <= 0.0) return out;  // one core waits for nobody: the figures as measured
  // The step simulator charges a span between two synchronizations (spread + noise) x E[max of n]
  // of its length. The round times are heavy-tailed (a core taken away for a while, now and then),
  // so their coefficient of variation puts that wait far above the barrier's (2-3x on the 2-core VM).
  // Keep the two terms' sum at what the barrier measured; the spread, being a part of it, no larger.
  const double per_sd = v.barrier_wait() / e_max;
  out.speed_spread = std::min(out.speed_spread, per_sd);
  out.noise = per_sd - out.speed_spread;
  return out;
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
  m.device.memory_capacity_bytes = static_cast<Bytes>(std::llround(f.memory_capacity_per_core));
  m.device.memory_bandwidth = Bandwidth::from_bytes_per_s(f.memory_bandwidth_per_core);
  m.device.gemm = gemm_table(c, f.peak_fp32_flops);
  m.device.elementwise.elements_per_s = f.elementwise_per_s;
  m.device.busy_node_compute = c.busy_node.share();
  if (c.variability.threads > 0) {
    const SynchronizingVariability v = synchronizing_variability(c.variability);
    // A coefficient of variation of 1 or more is no spread the file can hold (the schema's [0, 1)).
    m.variability.device_speed_spread = std::min(v.speed_spread, 0.99);
    m.variability.compute_noise = std::min(v.noise, 0.99);
  }

  const int ranks = std::max(c.mpi.ranks, 1);
  const bool one_node_per_rank = !c.shaped_network.empty();
  m.nodes = one_node_per_rank ? ranks : 1;
  m.node.devices = one_node_per_rank ? 1 : ranks;
  for (int a = 0; a < m.node.devices; ++a) {
    for (int b = a + 1; b < m.node.devices; ++b) {
      m.node.links.push_back(IntraNodeLink{a, b, f.link.bandwidth, f.link.latency});
    }
  }
  m.node.nics.push_back(Nic{0, f.link.bandwidth, f.link.latency});
  // The alpha-beta model reaches half its bandwidth at alpha x beta bytes.
  m.node.nic_efficiency.large_message_efficiency = 1.0;
  m.node.nic_efficiency.half_bandwidth_bytes =
      static_cast<Bytes>(std::llround(f.link.latency.seconds() * f.link.bandwidth.bytes_per_s()));

  // One switch with an endpoint per node: the bridge of the shaped network, or (one node) unused.
  // The NIC carries the whole fitted latency, so links and switch add none.
  DragonflySpec& net = m.network;
  net.groups = 1;
  net.switches_per_group = 1;
  net.ports_per_switch = m.nodes;
  net.endpoints_per_switch = m.nodes;
  net.global_ports_per_switch = 0;
  net.global_links_per_group_pair = 0;
  net.nodes_per_group = m.nodes;
  net.endpoint_link_bandwidth = net.local_link_bandwidth = net.global_link_bandwidth = f.link.bandwidth;
  net.endpoint_link_latency = net.local_link_latency = net.global_link_latency = Time::zero();
  net.switch_latency = Time::zero();
  net.routing = RoutingPolicy::minimal;

  // Over shared memory the collective's copies are the ranks' own cores' work (machine.hpp).
  m.collective_libraries.push_back(CollectiveLibrary{
      kCalibratedLibrary, f.ring.launch_latency, f.library_step_latency, f.library_bandwidth_efficiency, {},
      one_node_per_rank ? CollectiveProgress::asynchronous : CollectiveProgress::host});
  return m;
}

Machine with_measured_compute(Machine machine, const GemmMeasurements& gemm,
                              const ElementwiseMeasurements& elementwise) {
  Calibration c;
  c.gemm = gemm;
  c.elementwise = elementwise;
  CalibratedFigures f;
  f.peak_fp32_flops = std::max(machine.device.peak_fp32.flops(), gemm.best_flops());
  derive_elementwise(c, f);
  const double old_peak = machine.device.peak_fp32.flops();
  machine.device.peak_fp32 = FlopRate::from_flops(f.peak_fp32_flops);
  // A calibrated file has no bf16/fp16 units and repeats the fp32 peak: keep it so.
  if (machine.device.peak_bf16.flops() == old_peak) machine.device.peak_bf16 = machine.device.peak_fp32;
  if (machine.device.peak_fp16.flops() == old_peak) machine.device.peak_fp16 = machine.device.peak_fp32;
  machine.device.gemm = gemm_table(c, f.peak_fp32_flops);
  for (int i = 0; i < kElementwiseKernels; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (f.elementwise_per_s[k] > 0) machine.device.elementwise.elements_per_s[k] = f.elementwise_per_s[k];
  }
  return machine;
}

}  // namespace ws
