// Runs a study: for each (devices, model, batch) point, ranks every 4D layout with the analytic
// model, keeps the fastest that fits in memory, and derives weak-scaling efficiency.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/analytic/step_estimate.hpp"
#include "sim/machine/machine.hpp"
#include "sim/study/study_spec.hpp"

namespace ws {

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
};

struct StudyResult {
  StudySpec spec;
  Machine machine;
  std::vector<StudyRow> rows;  // in the order of spec.points
};

// Receives one human-readable line per finished point ("[2/5] frontier 1024 devices 10B: ...").
using StudyProgress = std::function<void(const std::string& line)>;

// Loads the spec's machine (by name from machines_dir, or by path) and evaluates every point.
// Throws InputError for an unknown machine or a point larger than the machine.
StudyResult run_study(const StudySpec& spec, const std::string& machines_dir,
                      const StudyProgress& progress = {});

// The same on a machine that is already loaded.
StudyResult run_study(const StudySpec& spec, const Machine& machine, const StudyProgress& progress = {});

// Sustained (executed) flop/s per device of a row's best layout.
double flops_per_device(const StudyRow& row);

}  // namespace ws
