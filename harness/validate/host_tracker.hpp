// Re-measures this host's compute between the engine runs of `weakscale validate`, with the probes
// of `weakscale calibrate` (its GEMM grid and element-wise kernels), so each configuration can be
// simulated on the machine as fast as the host was around its runs. On a dedicated host the file
// and the tracked machine agree; on a shared VM the speed drifts by 10-20 % over seconds to minutes
// (this project's 2-core VM: GELU's tanh 37-51 M elements/s in calibrations minutes apart), and a
// file written once measures one moment: its error then mixes the drift into the model's.
#pragma once

#include <memory>
#include <vector>

#include "harness/calibrate/elementwise_probe.hpp"
#include "harness/calibrate/gemm_probe.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// What a probe's passes say of the host undisturbed: the fastest (0 for none). Another tenant, a
// stolen vCPU or a slower clock only ever add time, so the fastest pass is the one they disturbed
// least; their median moved with how many passes they caught (on a noisy 2-core Xeon VM, at
// 8e27f12, at least half of r04's passes ran at about 0.65 of the file's speed, and their median
// priced a run that ran at full speed 42 % slow). validate keeps the fastest of a configuration's engine
// runs (kept_try) for the same reason (Chen and Revels, arXiv 1608.04295: under noise that only
// delays, the minimum is the robust estimator of a benchmark's time).
double fastest_pass_seconds(const std::vector<double>& seconds);

// busy_node_compute from several passes of measure_busy_node_gemm: the fastest per-core rate with
// every core busy over the fastest rate alone (at most 1; 1 for none). Not a statistic of each
// pass's share: that ratio of two timings moves either way with interference (a disturbed lone run
// raises it, a disturbed busy one lowers it), and its median followed the disturbed passes (0.80
// and 0.88 on the noisy Xeon VM at 535fd2c for runs that ran as fast as the file's 1.00 predicts).
double fastest_busy_node_share(const std::vector<BusyNodeGemm>& passes);

class HostTracker {
 public:
  // Warms every probe up once (page faults, batch sizes).
  HostTracker(Machine file_machine, GemmGrid grid, ElementwiseShapes shapes);
  // One pass: every GEMM shape and variant and every kernel, once each (interleaved_timing.hpp),
  // and, where the file's node has several devices (cores), sgemm 512^3 alone and on all of them
  // at once, as `calibrate` measures busy_node_compute.
  void pass();
  int passes() const;
  // The file's machine with the device's compute from the fastest of the passes since the last
  // call, per probe (fastest_pass_seconds, with_measured_compute), and busy_node_compute from
  // their fastest busy and fastest lone rates (fastest_busy_node_share); the file's own when there
  // were none.
  Machine take_machine();
  const Machine& file_machine() const { return file_machine_; }

 private:
  Machine file_machine_;
  GemmGridProbes gemm_;
  ElementwiseProbes elementwise_;
  std::vector<TimedProbe> probes_;
  std::size_t gemm_probes_ = 0;
  std::vector<std::vector<double>> samples_;  // per probe, since the last take_machine()
  std::vector<BusyNodeGemm> busy_node_;        // per pass, since the last take_machine()
  static constexpr int kBusySide = 512;        // calibrate's busy-node GEMM
  static constexpr int kBusyRepetitions = 3;   // batches of >= 20 ms (calibrate: 5)
};

}  // namespace ws
