// Whole training steps against published runs (weakscale end-to-end-vs-published): each row of
// benchmarks/end-to-end/published.csv (a framework's run on a Slingshot machine: model, layout,
// batch and a measured throughput with its definition and source) simulated on its machine file
// as written, its step turned into the row's unit, and the error reported. No term of any machine
// file is fitted to these rows.
#pragma once

#include <string>
#include <vector>

#include "base/units.hpp"
#include "sim/machine/machine.hpp"
#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "workload/precision.hpp"

namespace ws {

struct PublishedRun {
  int line = 0;  // in the file
  std::string machine, framework, model_name, unit, definition, source;
  double measured = 0;
  // Set when the row says everything a step needs; else `missing` says what it lacks.
  ModelSpec model;
  Layout layout;
  Precision precision = Precision::bf16;
  bool recompute = false;
  long long global_batch = 0;
  int devices = 0;
  int ranks_per_node = 0;  // devices / nodes where the row gives its nodes; 0: full nodes
  std::string file;        // the table's, for errors about the row
  std::string missing;
};

// The rows of a published-runs table (header named by column; '#' lines are comments). A
// malformed value (a non-number where a number goes, an unknown unit, precision or family) is an
// InputError naming the file, line and column; a row that leaves out what a step needs is kept,
// with `missing` saying which.
std::vector<PublishedRun> load_published_runs(const std::string& path);

// The units a row's throughput may be given in, and what the simulated step gives for each.
// "TFLOP/s per GCD" and "TFLOP/s per GPU" count the flops the step executes (recomputation
// included, as Megatron-LM's and GPT-NeoX's logs count them), "% of peak" the same over the
// device's peak; "samples/s total", "tokens/s per GCD", "tokens/s per GPU", "tokens/s total";
// "PFLOP/s total", "EFLOP/s total".
inline constexpr const char* kRunUnits =
    "TFLOP/s per GCD, TFLOP/s per GPU, % of peak, samples/s total, tokens/s per GCD, tokens/s per GPU, "
    "tokens/s total, PFLOP/s total, EFLOP/s total";

struct RunComparison {
  PublishedRun run;
  bool simulated = false;
  double predicted = 0;   // in the row's unit
  double error = 0;       // predicted / measured - 1
  Time step;              // the simulated step
  bool fits_memory = true;
  // The 10th and 90th percentile of the throughput over draws of the machine file's uncertainty
  // ranges (band_samples of them; none: 0).
  double band_low = 0, band_high = 0;
  bool in_band() const { return band_high > 0 && run.measured >= band_low && run.measured <= band_high; }
};

// The row's throughput, in its unit, from its step simulated on `machine` (flow network); the step
// itself into `step_out` where given. The row must say everything a step needs (missing empty).
double simulated_throughput(const Machine& machine, const PublishedRun& run, Time* step_out = nullptr);

// Every row simulated on <machines_dir>/<machine>.yaml as written (flow network; the row's layout
// in Megatron-LM's terms), or kept unsimulated with why.
std::vector<RunComparison> compare_runs_with_published(const std::vector<PublishedRun>& runs,
                                                       const std::string& machines_dir, int band_samples = 0);

// One factor per machine, fitted to its simulated rows: the machine file's gemm_efficiency_scale
// (the uncertain parameter the steps move with most: the GEMM table's reach under the rows' software
// stack), chosen by least squares of log(predicted / measured) over the rows, and scored twice: in
// sample, and leave-one-out (each row predicted by the factor fitted to the machine's other rows).
// How far one calibration of the compute explains the rows, and how well it predicts one it has
// not seen; a single factor cannot be tuned to single rows.
struct ComputeScaleFit {
  std::string machine;
  double as_written = 1.0;                 // the file's gemm_efficiency_scale
  double fitted = 1.0;                     // fitted to every simulated row of the machine
  double range_low = 0, range_high = 0;    // the file's uncertainty range for it (0, 0: none)
  std::vector<std::size_t> rows;           // indices into the comparisons
  std::vector<double> fitted_predicted;    // per row of `rows`: with `fitted`
  std::vector<double> held_out_predicted;  // per row: with the factor fitted to the other rows
};
inline constexpr double kComputeScaleLow = 0.3, kComputeScaleHigh = 1.5;  // the searched span
inline constexpr int kComputeScaleGrid = 13;  // simulated factors per row, log-spaced over the span

// Per machine with at least two simulated rows. Each row is simulated at kComputeScaleGrid factors
// and its log throughput interpolated between them (piecewise linear in log factor), so the fits
// price no step of their own.
std::vector<ComputeScaleFit> fit_compute_scale(const std::vector<RunComparison>& comparisons,
                                               const std::string& machines_dir);

}  // namespace ws
