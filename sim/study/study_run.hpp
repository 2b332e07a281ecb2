// Runs a study: for each (devices, model, batch) point, scores every 4D layout with the point
// evaluator (unless told otherwise: the analytic model ranks them all and the step simulator
// re-ranks its fastest), keeps the top k that fit in memory, and derives weak-scaling efficiency. Optionally also: node allocation x routing at the largest
// points, seeded samples of the machine's uncertain parameters (median and band per point), and a
// one-at-a-time sensitivity table. The work is a fixed list of tasks (study_tasks.hpp) that can be
// spread over ranks and threads and resumed from a partial file; the result depends on none of them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/step/step_estimate.hpp"
#include "sim/machine/machine.hpp"
#include "sim/study/point_evaluation.hpp"
#include "sim/study/rank_group.hpp"
#include "sim/study/study_spec.hpp"

namespace ws {

// 10th, 50th and 90th percentile of a quantity over the uncertainty samples.
struct Band {
  double p10 = 0, p50 = 0, p90 = 0;
};

// Where a point's weak-scaling efficiency goes, relative to the first feasible point: efficiency =
// compute_efficiency x busy_i / busy_0, with busy = compute / step; efficiency - 1 splits exactly
// into the compute term and one term per part of the step that is not computation:
//   compute:  compute_efficiency - 1 (executed flops per device per second of computation)
//   part c:   -compute_efficiency x (share_c,i - share_c,0) / busy_0, share_c = c / step
// The parts: exposed X, Y, Z and data-parallel communication (each collective priced alone),
// skew (variability: slowest device, waits for slowest members) and contention (what collectives
// in flight together cost each other: the flow step minus the step with every collective alone).
struct EfficiencyDecomposition {
  double compute_efficiency = 1.0;
  double compute = 0, x = 0, y = 0, z = 0, data = 0, skew = 0, contention = 0;
  // Pipelined layouts: the last stage idle for its peers (the bubble), and waiting for stage transfers.
  double pipeline = 0, pipeline_transfer = 0;
  double sum() const { return compute + x + y + z + data + skew + contention + pipeline + pipeline_transfer; }
};

struct StudyRow {
  StudyPoint point;
  bool feasible = false;    // some valid layout fits in device memory
  std::string reason;       // why not, when !feasible
  LayoutEstimate best;      // meaningful only when feasible
  int layouts_valid = 0;    // layouts that can run the model and batch (divisibility)
  int layouts_fitting = 0;  // of those, the ones that fit in device memory
  // Weak-scaling efficiency: sustained flop/s per device relative to the first feasible point.
  // The model grows with the device count, so step time is not comparable across points; the
  // work each device gets done per second is. 1.0 means perfect weak scaling.
  double efficiency = 0;
  EfficiencyDecomposition decomposition;  // meaningful when feasible
  std::vector<LayoutEstimate> candidates;  // the top k fitting layouts, fastest first (best first)
  // Over the samples in which the point is feasible (set only when the study was sampled).
  std::optional<Band> efficiency_band, peak_fraction_band, step_band;
  int samples_feasible = 0;
};

// One (allocation, routing) variant of one of the largest points, with its own best layout.
struct PlacementRoutingRow {
  int point = 0;  // index into spec.points
  NodeAllocation allocation = NodeAllocation::contiguous;
  RoutingPolicy routing = RoutingPolicy::adaptive;
  bool feasible = false;
  LayoutEstimate best;
};

// One uncertain parameter at the low and at the high end of its range, the others nominal:
// efficiency and hardware percent of peak at the largest point.
struct SensitivityRow {
  UncertaintyRange range;
  std::string nominal;  // the machine file's value, as written there
  double efficiency_low = 0, efficiency_high = 0;
  double peak_fraction_low = 0, peak_fraction_high = 0;
  double effect() const;  // largest change of either quantity from nominal, fraction points
};

struct StudyResult {
  StudySpec spec;
  Machine machine;
  std::vector<StudyRow> rows;  // in the order of spec.points
  std::string evaluator = "closed-form";
  int top_k = 10;
  int samples = 0;  // uncertainty samples taken (0: none, no band columns)
  std::uint64_t seed = 0;
  std::vector<PlacementRoutingRow> placement_routing;  // point order, then allocation, routing
  std::vector<SensitivityRow> sensitivity;             // largest effect first
};

// One finished task, for a progress display. `point_line` is set for the main series' points
// ("[2/5] frontier 1024 devices 10B: best 16x1x2x32, 2.018 s").
struct StudyProgressEvent {
  int done = 0;   // tasks of this rank finished so far (computed or loaded)
  int total = 0;  // tasks of this rank
  bool loaded = false;  // taken from the partial file instead of computed
  std::string line;     // what finished, one line
  std::string point_line;
};
using StudyProgressCallback = std::function<void(const StudyProgressEvent&)>;

struct StudyRunOptions {
  StudyEvaluator evaluator = flow_evaluator();  // closed_form_evaluator(): the closed form alone
  int top_k = 10;                  // candidates kept per point
  int samples = 0;                 // uncertainty samples (needs Machine::uncertainty)
  std::uint64_t seed = 1;          // root seed of the samples
  bool placement_routing = false;  // allocation x routing at the largest points
  int placement_points = 2;        // how many of the largest device counts
  bool sensitivity = false;        // one-at-a-time table (needs Machine::uncertainty)
  // Each finished task is appended here (one JSON line, flushed) and found here on a rerun;
  // empty: no resume.
  std::filesystem::path partial_file;
  bool resume = true;  // false: append to partial_file but reuse nothing from it (--restart)
  RankGroup ranks;  // serial unless given
  // Threads that compute this rank's tasks (each with its own evaluator); the result, the partial
  // file and the progress lines are the same for any number.
  int jobs = 1;
  StudyProgressCallback progress;
};

// Runs every task of this rank and gathers all results on rank 0. Returns the result on rank 0
// (always in a serial run) and nullopt on the other ranks. Throws InputError for a point larger
// than the machine.
std::optional<StudyResult> execute_study(const StudySpec& spec, const Machine& machine,
                                         const StudyRunOptions& options);

// Receives one human-readable line per finished point ("[2/5] frontier 1024 devices 10B: ...").
using StudyProgress = std::function<void(const std::string& line)>;

// The series alone (top 10 candidates, no samples, no extra tables), serial and without resume.
// Loads the spec's machine (by name from machines_dir, or by path). Throws InputError for an
// unknown machine or a point larger than the machine.
StudyResult run_study(const StudySpec& spec, const std::string& machines_dir,
                      const StudyProgress& progress = {});
StudyResult run_study(const StudySpec& spec, const Machine& machine, const StudyProgress& progress = {});

// Sustained (executed) flop/s per device of a row's best layout.
double flops_per_device(const StudyRow& row);

}  // namespace ws
