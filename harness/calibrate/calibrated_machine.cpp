#include "harness/calibrate/calibrated_machine.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/statistics.hpp"
#include "harness/published/collective_fit.hpp"
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
// (workload/step_schedule.cpp): Q K^T and P V forward; dP, dV, dQ, dK backward.
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
  derive_elementwise(c, f);
  return f;
}

namespace {

// A timed collective as a row of the published-table fit: its busbw by nccl-tests' definitions,
// its job the ranks spread over the file's nodes, the machine's first library.
PublishedCollective probe_row(const Machine& machine, const TimedCollective& s) {
  PublishedCollective row;
  row.machine = machine.name;
  row.library = machine.collective_libraries.at(0).name;
  row.op = to_string(s.op);
  row.nodes = std::min(machine.nodes, s.ranks);
  row.devices = s.ranks;
  row.bytes = static_cast<Bytes>(std::llround(s.full_bytes));
  const double p = s.ranks;
  const double factor = s.op == CollectiveOp::all_reduce ? 2.0 * (p - 1) / p : (p - 1) / p;
  row.busbw_gbps = s.seconds > 0 ? static_cast<double>(row.bytes) / s.seconds * 1e-9 * factor : 0.0;
  row.file = "the MPI probe";
  return row;
}

}  // namespace

bool fittable_collective(const TimedCollective& s) { return s.ranks >= 2 && s.seconds > 0 && s.full_bytes >= 1; }

Time priced_collective_time(const Machine& machine, const TimedCollective& s) {
  return PublishedRowModel(machine, probe_row(machine, s)).time(machine.collective_libraries.at(0));
}

CalibratedLibraryFit fit_calibrated_library(const Machine& machine, const MpiMeasurements& mpi) {
  CalibratedLibraryFit fit;
  const CollectiveLibrary& base = machine.collective_libraries.at(0);
  fit.launch_latency = base.launch_latency;
  fit.step_latency = base.step_latency;
  fit.bandwidth_efficiency = base.bandwidth_efficiency;
  std::vector<PublishedRowModel> models;
  std::vector<double> seconds;
  for (const TimedCollective& s : mpi.collectives) {
    if (!fittable_collective(s)) continue;
    models.emplace_back(machine, probe_row(machine, s));
    seconds.push_back(s.seconds);
  }
  if (models.empty()) return fit;
  std::vector<const PublishedRowModel*> rows;
  for (const auto& m : models) rows.push_back(&m);
  const LibraryTerms terms = fit_library_terms(base, rows);
  fit.launch_latency = terms.launch_latency;
  fit.step_latency = terms.step_latency;
  fit.bandwidth_efficiency = terms.bandwidth_efficiency;
  const CollectiveLibrary fitted = with_terms(base, terms);
  for (std::size_t i = 0; i < models.size(); ++i) {
    fit.max_relative_residual =
        std::max(fit.max_relative_residual, std::abs(models[i].time(fitted).seconds() / seconds[i] - 1.0));
  }
  fit.rows = static_cast<int>(models.size());
  return fit;
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

  // Over shared memory the collective's copies are the ranks' own cores' work (machine.hpp). The
  // terms are fitted by pricing every timed collective on this very machine (its links, its
  // binomial and ring programs), from a start of the link's latency per step and full bandwidth.
  m.collective_libraries.push_back(CollectiveLibrary{
      kCalibratedLibrary, f.link.latency, f.link.latency, 1.0, {},
      one_node_per_rank ? CollectiveProgress::asynchronous : CollectiveProgress::host});
  const CalibratedLibraryFit fit = fit_calibrated_library(m, c.mpi);
  CollectiveLibrary& library = m.collective_libraries.front();
  library.launch_latency = fit.launch_latency;
  library.step_latency = fit.step_latency;
  library.bandwidth_efficiency = fit.bandwidth_efficiency;
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
