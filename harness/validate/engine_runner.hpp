// Runs weakscale-engine under mpirun for one validation run and reads its `summary` line.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/process/child_process.hpp"
#include "harness/validate/phase_times.hpp"
#include "harness/validate/validation_run.hpp"

namespace ws {

struct EngineRunner {
  std::string engine_executable;  // path of weakscale-engine
  std::string mpirun = "mpirun";  // looked up on PATH
  RankLauncher launcher = {};     // empty: ranks on shared memory; see harness/netns
};

// An engine run that failed or printed no summary; the message holds the command and the tail
// of what it printed.
class EngineRunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `mpirun -n R --oversubscribe <launcher> ENGINE <engine_arguments(run)>`. --oversubscribe because Open MPI
// counts slots as cores and the matrix may ask for more ranks than a small host has; each rank's
// OpenBLAS gets one thread (one rank = one core, as the machine file's device is).
std::vector<std::string> engine_command(const EngineRunner& runner, const ValidationRun& run);

// The engine's summary line among its output (other lines, and anything that is not JSON, are
// skipped): step_s, compute_s and the per-group exposed_s of "comm".
// Throws EngineRunError when there is no summary line.
PhaseTimes parse_engine_summary(const std::string& output);

// Runs the engine with --trace (for the compute time per kind) and returns what it measured. The
// trace goes to `keep_trace` when given, else to a temporary file that is removed.
// Throws EngineRunError on a non-zero exit.
PhaseTimes measure_run(const EngineRunner& runner, const ValidationRun& run,
                       const std::optional<std::filesystem::path>& keep_trace = std::nullopt);

}  // namespace ws
