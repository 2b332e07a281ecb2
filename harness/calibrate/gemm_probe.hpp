// Times single-threaded OpenBLAS sgemm (fp32, row-major) over a grid of shapes in the three
// transpose variants the training step issues: NN (forward), NT (dX = dY W^T), TN (dW = X^T dY).
#pragma once

#include <string>
#include <span>
#include <vector>

#include "harness/calibrate/interleaved_timing.hpp"

namespace ws {

struct GemmGridShape {
  int m = 0, n = 0, k = 0;
};

struct GemmGrid {
  std::vector<GemmGridShape> shapes;
  int repetitions = 5;  // timed batches per (shape, variant) after one untimed warm-up call
};

// Best rate (flop/s, 2 m n k flops per call) of each variant at one shape.
struct GemmShapeRate {
  int m = 0, n = 0, k = 0;
  double nn_flops = 0, nt_flops = 0, tn_flops = 0;
  double best_flops() const;
  const char* best_variant() const;
};

struct GemmMeasurements {
  GemmGrid grid;
  std::vector<GemmShapeRate> rates;  // in grid order
  std::string blas;                  // openblas_get_config(): version, kernel, threading
  double wall_seconds = 0;

  double best_flops() const;  // over all shapes and variants
};

// Every cube 64..2048 and every (m, n, k) in {64, 512, 2048}^3: small, medium and large sides in
// all combinations cover the thin-k and tall-m shards of 3D tensor parallelism. ~10-20 s on one core.
GemmGrid default_gemm_grid();
// Three small shapes, one repetition: for tests.
GemmGrid quick_gemm_grid();

// The grid's probes, three per shape (NN, NT, TN, in grid order), for interleaved_median_seconds.
// They share one set of operand buffers, sized for the largest shape. A probe times one batch of
// calls in thread CPU time (thread_cpu_clock.hpp): a call under a millisecond is repeated, the
// batch size fixed at the warm-up call. Pins OpenBLAS to one thread (one rank per core, as the
// engine runs). The median, not the best, counts: the simulator predicts the engine's average step,
// and on a shared or virtual host the best of a few short batches is a rate the engine's GEMMs
// rarely see (best-of tables ran 10-20 % ahead of the engine here).
class GemmGridProbes {
 public:
  explicit GemmGridProbes(GemmGrid grid);
  std::vector<TimedProbe> probes();
  // Rates from the probes' median seconds per call (in probes() order).
  GemmMeasurements measurements(const std::vector<double>& seconds_per_call, double wall_seconds) const;

 private:
  GemmGrid grid_;
  std::vector<float> a_, b_, c_;
  std::vector<int> batch_;  // calls per timed batch, per probe; 0 until the warm-up call
};

// The grid alone: its probes interleaved over grid.repetitions passes.
GemmMeasurements measure_gemm(const GemmGrid& grid);

// One core's sgemm rate alone, and each core's when every core runs it at once (shared caches,
// power and clock): their ratio is the machine file's busy_node_compute.
struct BusyNodeGemm {
  int side = 0;     // an NN side^3 GEMM
  int threads = 0;  // cores running it at once
  double alone_flops = 0;
  double each_flops = 0;  // mean over the threads of each one's median
  int passes = 1;         // measurements combined by fastest_busy_node
  double share() const { return alone_flops > 0 ? std::min(each_flops / alone_flops, 1.0) : 1.0; }
};
BusyNodeGemm measure_busy_node_gemm(int side, int threads, int repetitions);

// Several passes as one: the fastest rate alone and the fastest per-core rate with every core busy,
// each the pass the host disturbed least (a disturbed lone run raises the share, a disturbed busy
// one lowers it, so no statistic of the passes' shares is safe). Empty: a default (share 1).
BusyNodeGemm fastest_busy_node(std::span<const BusyNodeGemm> passes);

// How the cores' speed differs and fluctuates with every core busy, for the machine file's
// `variability`: in each round every core runs the same number of sgemm calls (~10 ms) and waits for
// the others at a barrier, as ranks do between collectives. Wall time, not CPU time: time the host
// takes a core away (another process, another virtual CPU on the same hardware) makes it a slower
// core to the ranks that wait for it at a collective.
struct CoreVariability {
  int side = 0;     // an NN side^3 GEMM
  int threads = 0;  // cores running it at once
  std::vector<std::vector<double>> seconds_per_call;  // [core][round]
  // Coefficient of variation over the cores of each core's median rate: the fixed spread of speed.
  double speed_spread() const;
  // Coefficient of variation of the round times, each relative to its core's median, pooled over
  // the cores: a span's run-to-run jitter.
  double noise() const;
  // Each core's median rate, flop/s.
  std::vector<double> median_rates() const;
  // What the barrier cost: per round, the slowest core's time over the mean core's, less 1, averaged
  // over the rounds. A check on the two figures above, which the step simulator turns into waits.
  double barrier_wait() const;
  int passes = 1;  // probe passes this is the quietest of (quietest_variability)
};
CoreVariability measure_core_variability(int side, int threads, int rounds);
// Of several passes spread over a calibration, the one whose barrier cost least: the host disturbed
// it least, as validate keeps the least disturbed of a configuration's runs. A host busy for the
// whole of one pass (one core at 0.78 of the other, 2026-12-03, results/validation-stop53-noisy)
// would otherwise price every run with waits for a slow core that the runs do not see.
// Empty: a default (not measured).
CoreVariability quietest_variability(std::vector<CoreVariability> passes);

}  // namespace ws
