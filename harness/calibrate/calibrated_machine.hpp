// Turns a Calibration into machine-file figures: a "node" is this host, a "device" is one core
// running one MPI rank. The fits live here so the YAML writer and the Machine agree by
// construction.
#pragma once

#include "harness/calibrate/alpha_beta_fit.hpp"
#include "harness/calibrate/calibration.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// The collective library a calibrated file names: Open MPI (see collective_family()).
inline constexpr const char* kCalibratedLibrary = "openmpi";

struct CalibratedFigures {
  double peak_fp32_flops = 0;
  bool peak_from_measurement = false;  // the clock was unknown or a GEMM beat the derived peak
  double memory_bandwidth_per_core = 0;  // all-cores triad / cores
  double memory_capacity_per_core = 0;   // MemTotal / cores
  AlphaBeta link;   // ping-pong fit: the core-to-core "link"
  // Elements per second of each element-wise kernel (0: not written). For softmax_*, the attention
  // kernel's time minus its GEMMs as the calibrated GEMM table prices them (attention_gemm_seconds);
  // left out when that remainder is under 5 % of the kernel (not separable from the GEMMs).
  std::array<double, kElementwiseKernels> elementwise_per_s{};
  std::array<double, kElementwiseKernels> attention_gemm_seconds{};
};

CalibratedFigures derive_figures(const Calibration& c);

// The collective library's terms fitted to the timed MPI collectives by the simulator's own
// pricing: each collective becomes a row of the published-table fit (harness/published/
// collective_fit.hpp) on `machine` (the calibrated machine, whose first library is the start), so
// the file's terms are those of the model every prediction prices with, and pricing the written
// file gives back the times it was fitted to (max_relative_residual says how closely).
struct CalibratedLibraryFit {
  Time launch_latency;
  Time step_latency;
  double bandwidth_efficiency = 1.0;
  double max_relative_residual = 0;  // over the timed collectives, |priced / measured - 1|
  int rows = 0;                      // timed collectives fitted (0: none; the start is kept)
};
CalibratedLibraryFit fit_calibrated_library(const Machine& machine, const MpiMeasurements& mpi);
// Whether a timed collective enters the fit (two ranks or more, a positive time and size).
bool fittable_collective(const TimedCollective& collective);
// The simulator's price of one timed collective on `machine` with its first library.
Time priced_collective_time(const Machine& machine, const TimedCollective& collective);

// The file's `variability` from the barrier probe: the spread of the cores' medians and the jitter
// whose sum, times the expected maximum of `threads` normals, is the wait the barrier measured
// (the step simulator's price of one span between synchronizations), the spread capped at it.
// One core: the measured coefficients of variation as they are.
struct SynchronizingVariability {
  double speed_spread = 0.0;
  double noise = 0.0;
};
SynchronizingVariability synchronizing_variability(const CoreVariability& v);

// The Machine the written file describes: 1 node of `mpi.ranks` devices, all-to-all links with
// the ping-pong fit, one loopback NIC with the same figures (unused: one host), a 1-group
// 1-switch dragonfly, and an "openmpi" collective library. With a shaped network: `mpi.ranks`
// nodes of one device each, the ping-pong fit as every node's NIC, one switch joining them.
Machine calibrated_machine(const Calibration& c);

// `machine` with its device's GEMM table and element-wise throughputs replaced by new measurements
// of this host (`weakscale validate`'s host tracking): efficiencies over the file's fp32 peak, or
// over the fastest new rate where that is higher (then the peak follows it); memory, links and
// collectives are kept.
Machine with_measured_compute(Machine machine, const GemmMeasurements& gemm, const ElementwiseMeasurements& elementwise);

}  // namespace ws
