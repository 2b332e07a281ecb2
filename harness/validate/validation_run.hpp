// One engine configuration of the validation matrix (model, layout, batch, overlap switches) and
// the matrix itself: what `weakscale validate` runs on the real engine and simulates.
#pragma once

#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "workload/step_schedule.hpp"

namespace ws {

// The engine's four overlap schemes (engine/README.md "Overlap"); all on is the engine's default.
struct ValidationRun {
  std::string id;  // "r07": short, for plot labels; the CSV carries the configuration
  ModelSpec model;
  Layout layout;
  long long sequences = 0;  // global batch (the engine's --batch)
  // The engine's step switches (it trains in fp32): --recompute, --no-oar, --no-ors, --no-oag,
  // --no-overlap-dp.
  StepScheduleOptions schedule{};
  int steps = 6;   // engine --steps
  int warmup = 2;  // engine --warmup: steps left out of the mean (GEMM tuning happens in step 1)
  int ranks() const { return layout.devices(); }
};

struct MatrixOptions {
  int ranks_max = 2;   // runs with more ranks than this are left out
  bool quick = false;  // two tiny runs (tests), not a validation
};

// At least 30 runs for ranks_max >= 2: three model sizes on 1 rank (one also with recomputation),
// two sizes on every 2-rank layout with overlap on and off, the Llama, pipelines (micro-batches on
// one rank; two stages, 1F1B and interleaved), Megatron-LM's tp (vocabulary-parallel head) and
// distributed optimizer, and 4-rank layouts when allowed. Weak scaling: the
// global batch grows with the ranks, so every rank has about the same work.
std::vector<ValidationRun> validation_matrix(const MatrixOptions& options);

// The engine's flags for this run (everything after the executable).
std::vector<std::string> engine_arguments(const ValidationRun& run);

// The step schedule the engine runs for this configuration (a pipeline's: its first stage's, rank 0's).
StepSchedule step_schedule(const ValidationRun& run);

// "h256 l2 s128 v1024 b8 1x2x1x1 overlap on" for progress lines.
std::string describe(const ValidationRun& run);

}  // namespace ws
