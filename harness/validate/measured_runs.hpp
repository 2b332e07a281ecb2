// Engine runs measured elsewhere (a cluster, another host): the rows weakscale-engine --csv wrote,
// each turned back into its configuration and what it measured, for `weakscale validate --measured`
// to simulate on a machine file of that system.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/validate/phase_times.hpp"
#include "harness/validate/validation_run.hpp"

namespace ws {

struct MeasuredRun {
  ValidationRun run;  // id "m01", "m02", ... in file and row order
  PhaseTimes measured;  // step, compute, exposed per group and CPU time (no per-kind compute: no trace)
};

// Every data row of each file, in order. Throws InputError naming the file, the line and the
// column for a missing file or column, a value that is not a number of the expected kind, or a
// configuration the engine would refuse (validate_run's reasons), and for files without rows.
std::vector<MeasuredRun> read_measured_runs(const std::vector<std::filesystem::path>& files);

// One file's text (`file` names it in errors); ids continue after `runs_before` earlier runs.
std::vector<MeasuredRun> parse_measured_runs(const std::string& text, const std::string& file, int runs_before = 0);

}  // namespace ws
