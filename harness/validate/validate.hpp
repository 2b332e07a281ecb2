// `weakscale validate`: runs the validation matrix on the real engine, simulates every run on the
// calibrated machine file and computes the error (report/validation writes and prints them).
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/units.hpp"
#include "harness/validate/engine_runner.hpp"
#include "harness/validate/step_simulation.hpp"
#include "harness/validate/validation_record.hpp"

namespace ws {

class HostTracker;

struct ValidateOptions {
  std::string machine_file = "machines/local.yaml";
  std::filesystem::path out_dir = "results";
  bool quick = false;
  int ranks_max = 0;  // 0: the host's hardware threads
  EngineRunner engine;
  bool plot = true;
  std::optional<std::filesystem::path> trace_dir;  // keep <run>-engine.json and <run>-simulated.json here
  std::string command_line;  // for the JSON file
  // Run every rank in its own network namespace over veth links shaped to this rate (harness/netns),
  // with weakscale-netns-exec as each rank's wrapper. The machine file must then have one device
  // per node (`weakscale calibrate --netns-rate`).
  std::optional<Bandwidth> netns_rate;
  std::string netns_exec_executable;
  // Engine runs per configuration; the fastest is kept (the host's interference only ever adds
  // time, so the fastest run is the one it disturbed least, and one slow run does not decide a
  // point; the tracker takes its passes' fastest likewise). The command makes it 1 for --quick
  // unless --repeat is given.
  int repeat = 3;
  // Re-measure this host's compute in passes around each configuration's engine runs (before the
  // first, after each) and simulate the configuration on the file's machine with that compute
  // (host_tracker.hpp); the file as written is simulated too and reported beside it.
  bool track_host = true;
  // Ids of the matrix's runs to do ("r02", "r13"); empty: all of them.
  std::vector<std::string> only_runs;
  // Runs made elsewhere (weakscale-engine --csv files): simulated on the machine file instead of
  // running the matrix here (no engine runs, no host tracking; harness/validate/measured_runs.hpp).
  std::vector<std::filesystem::path> measured;
  // Validate the machine file as written even when it was measured on another host or boot (the
  // command otherwise calibrates this host first, cli/validate_command.cpp).
  bool as_written = false;
};

// How the results were made, for the JSON file.
struct ValidationProvenance {
  std::string command_line;
  std::string machine_name;
  std::string machine_file;
  std::string git_commit;
  unsigned host_cores = 0;
  double wall_s = 0;
  double median_core_share = 0;  // median_core_share(records)
  double median_host_speed = 0;  // median_host_speed(records)
  std::string rank_network = {};  // how the ranks talked: shared memory, or harness/netns's description
  int runs_per_configuration = 1;  // engine runs per configuration, the median kept
  bool host_tracking = false;      // simulated on compute re-measured around each configuration's runs
};

struct ValidationReport {
  std::vector<ValidationRecord> records;
  std::optional<ErrorSummary> errors;  // none when no run was simulated
  std::optional<ErrorSummary> errors_on_file;  // with host tracking: the file as written
  ValidationProvenance provenance;
  std::vector<std::filesystem::path> files;
  double wall_s = 0;
};

// Measures and simulates each run in turn, printing one line per run to `log`. An empty
// `simulate` measures only (records without a simulation). With a trace_dir, both timelines of
// every run are kept there.
// `host_speed`, when given, is called right before each run (measured.host_speed). Each
// configuration runs `repeat` times and keeps the fastest run (kept_try; its trace too).
// With a `tracker`, it makes a pass before each configuration's first run and after each run,
// the configuration is simulated on tracker->take_machine() and `simulate` (the file's machine)
// fills simulated_on_file.
using HostSpeedProbe = std::function<double()>;
// Index of the try with the shortest step time (the first of equals); 0 for none.
std::size_t kept_try(const std::vector<PhaseTimes>& tries);
std::vector<ValidationRecord> validate_runs(const std::vector<ValidationRun>& runs, const EngineRunner& engine,
                                            const StepSimulator& simulate,
                                            const std::optional<std::filesystem::path>& trace_dir, std::ostream& log,
                                            const HostSpeedProbe& host_speed = {}, int repeat = 1,
                                            HostTracker* tracker = nullptr);

// This host's speed now relative to `machine` (a calibrated file): one-thread sgemm 512^3
// (median of 5 batches, as `weakscale calibrate` times it), over the rate the machine's GEMM table gives.
double measure_host_speed(const Machine& machine);

// The whole command but its files (write_validation_report, report/validation/validation_report.hpp).
// InputError for a missing machine file or engine; EngineRunError when a run fails.
ValidationReport validate(const ValidateOptions& options, std::ostream& log);

}  // namespace ws
