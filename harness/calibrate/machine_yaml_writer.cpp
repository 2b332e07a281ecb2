#include "harness/calibrate/machine_yaml_writer.hpp"

#include "base/quantity.hpp"
#include "base/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "harness/calibrate/calibrated_machine.hpp"

namespace ws {
namespace {


std::string gflops(double flops) { return significant(flops * 1e-9) + " GFLOP/s"; }
std::string gbps(double bytes_per_s) { return significant(bytes_per_s * 1e-9) + " GB/s"; }
std::string gbps(Bandwidth b) { return gbps(b.bytes_per_s()); }
std::string ns(Time t) { return fmt::format("{:.3f} ns", t.ns()); }
std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string mib(double bytes) { return significant(bytes / 1048576.0, 4) + " MiB"; }

std::string escape(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

// What the fit is fitted to, in the comment: the smallest message's time and the best rate seen.
std::string ping_pong_extremes(const MpiMeasurements& mpi) {
  if (mpi.ping_pong.empty()) return "";
  const TimedTransfer* smallest = &mpi.ping_pong.front();
  const TimedTransfer* fastest = smallest;
  for (const auto& t : mpi.ping_pong) {
    if (t.bytes < smallest->bytes) smallest = &t;
    if (t.bytes / t.seconds > fastest->bytes / fastest->seconds) fastest = &t;
  }
  return fmt::format("; measured: {:.0f} B one way in {:.3f} us, best {} at {}", smallest->bytes,
                     smallest->seconds * 1e6, gbps(fastest->bytes / fastest->seconds), mib(fastest->bytes));
}

std::string smallest_collective_times(const MpiMeasurements& mpi) {
  std::string out;
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    const TimedCollective* smallest = nullptr;
    for (const auto& t : mpi.collectives) {
      if (t.op == op && (smallest == nullptr || t.full_bytes < smallest->full_bytes)) smallest = &t;
    }
    if (smallest == nullptr) continue;
    out += fmt::format("{}{} {:.0f} B in {:.3f} us", out.empty() ? "" : ", ", to_string(op), smallest->full_bytes,
                       smallest->seconds * 1e6);
  }
  return out;
}

std::string size_range(const MpiMeasurements& mpi) {
  return fmt::format("1 B .. {} in x4 steps", mib(mpi.largest_bytes));
}

// What the file is, how to regenerate it, the host; name and node count.
void write_header(std::string& y, const Calibration& c, const Machine& m) {
  const HostFacts& h = c.host;
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  const bool shaped = !c.shaped_network.empty();
  line(fmt::format("# {}: this host, measured by `weakscale calibrate` (harness/calibrate/, schema machines/SCHEMA.md).",
                   c.machine_name));
  line("# A \"node\" is this host and a \"device\" is one CPU core running one MPI rank with single-threaded");
  line("# OpenBLAS, as weakscale-engine runs. Every figure below was measured, not looked up; its comment");
  line("# says how. Regenerate with:");
  line(fmt::format("#   {}", c.command_line));
  line(fmt::format("# Measured {} on {}: {}, {} cores, {} GiB memory.", c.date_utc, h.hostname,
                   h.cpu_model.empty() ? "unknown CPU" : h.cpu_model, h.cores,
                   significant(h.memory_bytes / 1073741824.0, 4)));
  line(fmt::format("# BLAS: {}. MPI: {}.", c.gemm.blas, c.mpi.library));
  if (!c.note.empty()) line(fmt::format("# Note: {}", c.note));
  line(fmt::format("name: {}", c.machine_name));
  line(fmt::format("description: \"{}\"",
                   escape(fmt::format("this host ({}, {} cores) calibrated {}", h.cpu_model, h.cores, c.date_utc))));
  line(fmt::format("measured_on: {{hostname: \"{}\", machine_id: \"{}\", boot_id: \"{}\", cpu_model: \"{}\", cores: {}}}"
                   "  # the host and boot these figures describe: `weakscale validate` calibrates anew on any other",
                   escape(h.hostname), escape(h.machine_id), escape(h.boot_id), escape(h.cpu_model), h.cores));
  if (shaped) {
    line(fmt::format("# Network: {}. A \"node\" is one rank's namespace (one core of this host); the nodes share", c.shaped_network));
    line("# the host's cores and memory, so device figures are per core as without the namespaces.");
    line(fmt::format("nodes: {}  # one per rank and network namespace", m.nodes));
  } else {
    line("nodes: 1  # one host; every rank of a calibrated run shares it");
  }
  line("");
}

// The engine's element-wise kernels on one core, elements/s (only those the probes measured).
void write_elementwise(std::string& y, const Calibration& c, const CalibratedFigures& f) {
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  const auto& e = c.elementwise;
  bool any_elementwise = false;
  for (double rate : f.elementwise_per_s) any_elementwise = any_elementwise || rate > 0;
  if (any_elementwise) {
    line(fmt::format("  elementwise_throughput:  # elements/s of the engine's own fp32 kernels (engine/kernels) on one "
                     "core, median of {} calls after a warm-up in the GEMM table's passes, thread CPU time; probes took {:.1f} s",
                     e.shapes.repetitions, e.wall_seconds));
    for (int i = 0; i < kElementwiseKernels; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (f.elementwise_per_s[k] <= 0) continue;
      const auto kernel = static_cast<ElementwiseKernel>(i);
      std::string how;
      switch (kernel) {
        case ElementwiseKernel::gelu_forward:
        case ElementwiseKernel::gelu_backward:
          how = fmt::format("{} elements", e.shapes.gelu_elements);
          break;
        case ElementwiseKernel::swiglu_forward:
        case ElementwiseKernel::swiglu_backward:
          how = fmt::format("{} rows x {} outputs (gate and up in)", e.shapes.layer_norm_rows,
                            e.shapes.gelu_elements / e.shapes.layer_norm_rows);
          break;
        case ElementwiseKernel::layer_norm_forward:
        case ElementwiseKernel::layer_norm_backward:
        case ElementwiseKernel::rms_norm_forward:
        case ElementwiseKernel::rms_norm_backward:
          how = fmt::format("{} rows x {}", e.shapes.layer_norm_rows, e.shapes.layer_norm_width);
          break;
        case ElementwiseKernel::softmax_forward:
        case ElementwiseKernel::softmax_backward:
          how = fmt::format("attention, {} sequences x {} heads, sequence {}, head dim {}: {:.3f} ms minus {:.3f} ms "
                            "of GEMMs as the table above prices them, per S x S score",
                            e.shapes.attention_sequences, e.shapes.attention_heads, e.shapes.attention_seq,
                            e.shapes.attention_head_dim, e.seconds[k] * 1e3, f.attention_gemm_seconds[k] * 1e3);
          break;
        case ElementwiseKernel::cross_entropy_forward:
        case ElementwiseKernel::cross_entropy_backward:
          how = fmt::format("{} rows x vocabulary {}", e.shapes.cross_entropy_rows, e.shapes.cross_entropy_vocabulary);
          break;
      }
      if (kernel != ElementwiseKernel::softmax_forward && kernel != ElementwiseKernel::softmax_backward)
        how += fmt::format(": {:.3f} ms per call", e.seconds[k] * 1e3);
      line(fmt::format("    {}: {:.4g}  # {}", to_string(kernel), f.elementwise_per_s[k], how));
    }
  }
}

// The device: one core: peaks, memory, the GEMM table, busy-node compute, element-wise kernels.
void write_device(std::string& y, const Calibration& c, const CalibratedFigures& f, const Machine& m) {
  const HostFacts& h = c.host;
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  line("device:");
  line(fmt::format("  name: {}", quoted(escape(m.device.name))));
  line("  peak:");
  const std::string same_as_fp32 = fmt::format(
      "  # no {} arithmetic in the core's flags ({}): the engine computes in fp32, so fp32's peak stands in",
      "bf16/fp16", h.vector_isa);
  line(fmt::format("    bf16: \"{}\"{}", gflops(f.peak_fp32_flops), same_as_fp32));
  line(fmt::format("    fp16: \"{}\"{}", gflops(f.peak_fp32_flops), same_as_fp32));
  if (f.peak_from_measurement) {
    line(fmt::format(
        "    fp32: \"{}\"  # highest single-thread sgemm rate of the table below, since the derived peak {} from {} MHz x {} "
        "flops/cycle was {}",
        gflops(f.peak_fp32_flops), gflops(h.fp32_peak_flops()), significant(h.clock_hz * 1e-6),
        h.fp32_flops_per_cycle(), h.clock_hz > 0 ? "lower (the core runs above the listed clock, e.g. boost)" : "unknown (no clock found)"));
  } else {
    line(fmt::format("    fp32: \"{}\"  # derived, one core: {} MHz ({}) x {} fp32 lanes ({}) x 2 (FMA) x {} FMA "
                     "unit(s) (assumed: /proc does not show it)",
                     gflops(f.peak_fp32_flops), significant(h.clock_hz * 1e-6), h.clock_source, h.fp32_lanes,
                     h.vector_isa, h.fma_units));
  }
  line("  memory:");
  line(fmt::format("    capacity: \"{} GiB\"  # /proc/meminfo MemTotal / {} cores",
                   significant(f.memory_capacity_per_core / 1073741824.0), std::max(h.cores, 1)));
  line(fmt::format(
      "    bandwidth: \"{}\"  # STREAM triad on doubles, 3 arrays of {} ({}), best of {} passes: {} cores together "
      "{} (wall time), shared per core; one core alone reaches {} (thread CPU time)",
      gbps(f.memory_bandwidth_per_core), mib(c.memory.array_bytes),
      c.memory.array_bytes >= 2.0 * h.last_level_cache_bytes && h.last_level_cache_bytes > 0
          ? fmt::format(">> the {} last-level cache: DRAM", mib(h.last_level_cache_bytes))
          : fmt::format("NOT >> the {} last-level cache: a quick run, not DRAM", mib(h.last_level_cache_bytes)),
      c.memory.repetitions, c.memory.threads, gbps(c.memory.all_cores_bytes_per_s),
      gbps(c.memory.one_core_bytes_per_s)));
  line(fmt::format("  gemm_efficiency:  # cblas_sgemm (fp32, row-major), 1 thread; per shape and variant the median of {} "
                   "timed calls (batched to >= 1 ms, thread CPU time) after a warm-up, in passes over the whole grid "
                   "and the element-wise kernels below (so every figure spans the same {:.0f} s of the host's drift); "
                   "the table keeps the best of NN / NT / TN, the comment lists all three in GFLOP/s; efficiency = "
                   "rate / fp32 peak",
                   c.gemm.grid.repetitions, c.gemm.wall_seconds));
  for (std::size_t i = 0; i < c.gemm.rates.size(); ++i) {
    const auto& r = c.gemm.rates[i];
    line(fmt::format("    - {{m: {}, n: {}, k: {}, efficiency: {}}}  # NN {} NT {} TN {}", r.m, r.n, r.k,
                     significant(m.device.gemm.samples[i].efficiency, 4), significant(r.nn_flops * 1e-9, 4),
                     significant(r.nt_flops * 1e-9, 4), significant(r.tn_flops * 1e-9, 4)));
  }
  if (c.busy_node.alone_flops > 0) {
    line(fmt::format("  busy_node_compute: {:.4f}  # sgemm {}^3 NN, 1 thread, median of batches >= 20 ms (thread CPU time), "
                     "the fastest of {} pass{} spread over the calibration: "
                     "{} GFLOP/s alone, {} GFLOP/s per core with all {} cores running it at once",
                     m.device.busy_node_compute, c.busy_node.side, c.busy_node.passes, c.busy_node.passes == 1 ? "" : "es",
                     significant(c.busy_node.alone_flops * 1e-9, 4),
                     significant(c.busy_node.each_flops * 1e-9, 4), c.busy_node.threads));
  }
  write_elementwise(y, c, f);
  line("");
}

// The node: the host (or one rank's namespace) with its core-to-core or veth link.
void write_node(std::string& y, const Calibration& c, const CalibratedFigures& f, const Machine& m) {
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  const bool shaped = !c.shaped_network.empty();
  const std::string ping = fmt::format("MPI ping-pong ranks 0 <-> 1, {}, best of {} batches, fit t = alpha + "
                                       "bytes / beta on relative error (max residual {:.0f}%){}",
                                       size_range(c.mpi), c.mpi.batches, 100.0 * f.link.max_relative_residual,
                                       ping_pong_extremes(c.mpi));
  line("node:");
  if (shaped) {
    line(fmt::format("  devices: 1  # one core, one MPI rank ({})", c.mpi.command));
    line("  nics:  # the rank's veth link: bridge, TCP and tbf shaping as one alpha-beta link");
    line(fmt::format("    - {{device: 0, bandwidth: \"{}\", latency: \"{}\"}}  # beta and alpha of the {}", gbps(f.link.bandwidth),
                     ns(f.link.latency), ping));
  } else {
    line(fmt::format("  devices: {}  # cores used, one MPI rank each ({})", m.node.devices, c.mpi.command));
    line("  all_to_all:  # every pair of cores talks through shared memory at the same cost");
    line(fmt::format("    bandwidth: \"{}\"  # beta of the {}", gbps(f.link.bandwidth), ping));
    line(fmt::format("    latency: \"{}\"  # alpha of the same fit{}", ns(f.link.latency),
                     f.link.latency == Time::zero() ? " (clamped: the fit gave alpha < 0)" : ""));
    line("  nics:  # not used: single host. The schema needs one; it repeats the core-to-core figures");
    line(fmt::format("    - {{device: 0, bandwidth: \"{}\", latency: \"{}\"}}  # same ping-pong fit as all_to_all",
                     gbps(f.link.bandwidth), ns(f.link.latency)));
  }
  line("  nic_efficiency:");
  line("    large_message: 1  # the fit's beta is already the achieved rate");
  line(fmt::format("    half_bandwidth_size: \"{} B\"  # alpha x beta: where the ping-pong fit reaches half of beta",
                   m.node.nic_efficiency.half_bandwidth_bytes));
  line("");
}

// The network: a minimal dragonfly for one host, or the bridge of the shaped namespaces.
void write_network(std::string& y, const Calibration& c, const CalibratedFigures& f, const Machine& m) {
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  const bool shaped = !c.shaped_network.empty();
  const std::string unused = shaped ? "" : "  # not used: single host";
  line(shaped ? "network:  # the bridge: one switch with a port per namespace; the NICs above carry the whole latency"
              : "network:  # not used: single host. A minimal valid 1-group, 1-switch dragonfly");
  line("  topology: dragonfly");
  line(shaped ? "  groups: 1  # one bridge" : "  groups: 1  # one host");
  line("  switches_per_group: 1  # minimal valid value");
  line(fmt::format("  ports_per_switch: {}  # {}", m.network.ports_per_switch,
                   shaped ? "one per namespace" : "minimal valid value: one endpoint port"));
  line(fmt::format("  endpoints_per_switch: {}  # {}", m.network.endpoints_per_switch,
                   shaped ? "one per namespace" : "the loopback NIC"));
  line("  global_ports_per_switch: 0  # one group");
  line("  global_links_per_group_pair: 0  # one group");
  line(fmt::format("  nodes_per_group: {}  # {}", m.network.nodes_per_group, shaped ? "every namespace" : "one host"));
  line(shaped ? "  links:  # the ping-pong fit's bandwidth; its latency is the NIC's"
              : "  links:  # the ping-pong fit's bandwidth, no wire latency (never crossed)");
  for (const char* kind : {"endpoint", "local", "global"}) {
    line(fmt::format("    {}: {{bandwidth: \"{}\", latency: \"0 ns\"}}{}", kind, gbps(f.link.bandwidth), unused));
  }
  line(fmt::format("  switch_latency: \"0 ns\"{}", shaped ? "  # in the NIC latency" : unused));
  line(fmt::format("  routing: minimal{}", unused));
  line("");
}

// The collective library fitted to the measured MPI collectives.
void write_collectives(std::string& y, const Calibration& c, const CalibratedFigures& f, const Machine& m) {
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  const CollectiveLibrary& lib = m.collective_libraries.front();
  // How closely the fitted file prices what was timed (the fit itself ran in calibrated_machine()).
  struct {
    int rows = 0;
    double max_relative_residual = 0;
  } fit;
  for (const TimedCollective& s : c.mpi.collectives) {
    if (!fittable_collective(s)) continue;
    ++fit.rows;
    fit.max_relative_residual =
        std::max(fit.max_relative_residual, std::abs(priced_collective_time(m, s).seconds() / s.seconds - 1.0));
  }
  line(fmt::format(
      "collectives:  # MPI_Iallreduce (in place) / MPI_Ireduce_scatter_block / MPI_Iallgather, each + MPI_Wait as the "
      "engine calls them, on {} ranks, full buffer {} x 4 B .. {} in x4 steps, slowest rank's per-call time in the best "
      "of {} batches; the terms below fitted by pricing each of the {} timed calls with the simulator on this file "
      "(Open MPI's binomial all-reduce and reduce-scatter, ring all-gather, over the links above; "
      "harness/calibrate/calibrated_machine.hpp), least squares of log(priced / measured) (max residual {:.0f}%); "
      "measured: {}",
      c.mpi.ranks, c.mpi.ranks, mib(c.mpi.largest_bytes), c.mpi.batches, fit.rows, 100.0 * fit.max_relative_residual,
      smallest_collective_times(c.mpi)));
  line(fmt::format("  - name: {}  # {}; priced as its non-blocking collectives (coll/libnbc), as the engine calls them",
                   lib.name, c.mpi.library));
  line(fmt::format("    launch_latency: \"{}\"  # the fit's launch term", ns(lib.launch_latency)));
  line(fmt::format("    step_latency: \"{}\"  # the fit's library time per step, on top of the links' latency above",
                   ns(lib.step_latency)));
  line(fmt::format("    bandwidth_efficiency: {}  # the fit's share of the links' bandwidth {} the collectives reach",
                   significant(lib.bandwidth_efficiency, 4), gbps(f.link.bandwidth)));
  if (lib.progress == CollectiveProgress::host) {
    line("    progress: host  # over shared memory the ranks' own cores copy and reduce the data, inside MPI calls "
         "(coll/libnbc has no progress thread; weakscale-engine's summary shows it as progress_s): a collective "
         "overlaps no compute");
  } else {
    line(fmt::format("    progress: asynchronous  # {}: the kernel's TCP stack moves the bytes while the rank "
                     "computes; the cores' share of that work is not modelled",
                     c.shaped_network.empty() ? "an asynchronous network" : c.shaped_network));
  }
}

// How the cores' speed differs and fluctuates with all of them busy: the step simulator's rank skew.
void write_variability(std::string& y, const Calibration& c, const Machine& m) {
  if (c.variability.threads <= 0) return;
  auto line = [&y](const std::string& text) { y += text + "\n"; };
  const std::vector<double> rates = c.variability.median_rates();
  const auto [slowest, fastest] = std::minmax_element(rates.begin(), rates.end());
  const std::size_t rounds = c.variability.seconds_per_call.empty() ? 0 : c.variability.seconds_per_call.front().size();
  line("");
  line(fmt::format("variability:  # sgemm {}^3 NN, 1 thread, on all {} cores at once, {} rounds of the same ~10 ms "
                   "of calls on every core, each round started together after a barrier; wall time (time the host "
                   "takes a core away slows it as the ranks that wait for it see); the quietest (least barrier "
                   "wait) of {} pass{} spread over the calibration",
                   c.variability.side, c.variability.threads, rounds, c.variability.passes,
                   c.variability.passes == 1 ? "" : "es"));
  line(fmt::format("  device_speed_spread: {}  # coefficient of variation over the cores of each one's median rate "
                   "({} .. {} GFLOP/s), at most what the barrier's wait allows (compute_noise)",
                   significant(m.variability.device_speed_spread, 4), significant(*slowest * 1e-9, 4),
                   significant(*fastest * 1e-9, 4)));
  const double e_max = expected_max_of_normals(c.variability.threads);
  const std::string wait = significant(100.0 * c.variability.barrier_wait(), 3);
  if (c.variability.threads < 2) {
    line(fmt::format("  compute_noise: {}  # coefficient of variation of the round times, each over its core's median, "
                     "pooled over the cores",
                     significant(m.variability.compute_noise, 4)));
  } else {
    // One round is one span between two synchronizations, which the step simulator prices as the
    // slowest device's lag plus the wait for the slowest member's jitter: (spread + noise) x E[max].
    line(fmt::format("  compute_noise: {}  # what, with the spread, gives the wait the barrier measured: the slowest "
                     "core took {} % longer than the mean one per round = ({} + {}) x {} (expected maximum of {} "
                     "normals); the round times' own coefficient of variation, each over its core's median, is {} "
                     "(heavy-tailed: a core taken away now and then)",
                     significant(m.variability.compute_noise, 4), wait, significant(m.variability.device_speed_spread, 3),
                     significant(m.variability.compute_noise, 3), significant(e_max, 3), c.variability.threads,
                     significant(c.variability.noise(), 3)));
  }
  line("  # collective_entry_jitter: not measured (0): a rank's call enters MPI at once, and the probe's collectives "
       "show no separate term for it");
}

}  // namespace

std::string format_calibrated_machine_yaml(const Calibration& c) {
  const CalibratedFigures f = derive_figures(c);
  const Machine m = calibrated_machine(c);
  std::string y;
  write_header(y, c, m);
  write_device(y, c, f, m);
  write_node(y, c, f, m);
  write_network(y, c, f, m);
  write_collectives(y, c, f, m);
  write_variability(y, c, m);
  return y;
}

}  // namespace ws
