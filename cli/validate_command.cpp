#include "cli/validate_command.hpp"

#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/netns/netns_cluster.hpp"
#include "report/validation/validation_report.hpp"

namespace ws::cli {
namespace {

// The command as a user would retype it, for validation.json.
std::string command_line(const ValidateOptions& o) {
  std::string s = fmt::format("weakscale validate --machine {} --out {}", o.machine_file, o.out_dir.string());
  if (o.quick) s += " --quick";
  if (o.ranks_max > 0) s += fmt::format(" --ranks-max {}", o.ranks_max);
  if (!o.plot) s += " --no-plot";
  if (!o.track_host) s += " --no-track-host";
  if (o.trace_dir) s += " --traces " + o.trace_dir->string();
  if (o.repeat != ValidateOptions{}.repeat) s += fmt::format(" --repeat {}", o.repeat);
  if (!o.only_runs.empty()) s += " --runs " + fmt::format("{}", fmt::join(o.only_runs, ","));
  if (o.netns_rate) s += fmt::format(" --netns-rate '{:.6g} Gb/s'", 8e-9 * o.netns_rate->bytes_per_s());
  for (const auto& f : o.measured) s += " --measured " + f.string();
  return s;
}

}  // namespace

CLI::App* add_validate_command(CLI::App& app, ValidateOptions& o, std::string& netns_rate) {
  CLI::App* c = app.add_subcommand(
      "validate", "Run the engine over a validation matrix, simulate each run on a calibrated machine file, "
                  "and write validation.csv/.json/.png/.svg with the error");
  c->add_option("--machine", o.machine_file, "calibrated machine file (weakscale calibrate)")->capture_default_str();
  c->add_option("--out", o.out_dir, "output directory")->capture_default_str();
  c->add_flag("--quick", o.quick, "two tiny runs (seconds; for tests, not a validation)");
  c->add_option("--ranks-max", o.ranks_max, "most MPI ranks per run (default: the host's hardware threads)")
      ->check(CLI::Range(1, 4096));
  o.engine.engine_executable = WEAKSCALE_ENGINE_EXE;
  c->add_option("--engine", o.engine.engine_executable, "path of weakscale-engine")->capture_default_str();
  c->add_option("--mpirun", o.engine.mpirun, "mpirun to start the engine with")->capture_default_str();
  c->add_flag("!--no-plot", o.plot, "skip the gnuplot figure");
  c->add_flag("!--no-track-host", o.track_host,
              "simulate on the machine file as written only, without re-measuring this host's compute around "
              "each configuration's runs");
  c->add_option("--traces", o.trace_dir,
                "keep every run's engine trace and write its simulated trace here (<run>-engine.json, "
                "<run>-simulated.json: load both in ui.perfetto.dev)");
  c->add_option("--repeat", o.repeat,
                "engine runs per configuration; the fastest is kept (--quick: 1 unless given)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  c->add_option("--runs", o.only_runs, "only these runs of the matrix, by id (e.g. r02,r13): to re-check points")
      ->delimiter(',');
  c->add_option("--netns-rate", netns_rate,
                "run every rank in its own network namespace, joined by veth links shaped to this rate (e.g. "
                "'1 Gb/s'), over Open MPI's TCP transport; needs root and a machine file from `weakscale calibrate "
                "--netns-rate`");
  c->add_option("--measured", o.measured,
                "instead of running the matrix here, simulate the runs of these weakscale-engine --csv files "
                "(made on a cluster or another host; repeatable) on --machine, a machine file of that system, and "
                "report the same errors and files")
      ->excludes(c->get_option("--quick"))
      ->excludes(c->get_option("--runs"))
      ->excludes(c->get_option("--netns-rate"));
  o.netns_exec_executable = WEAKSCALE_NETNS_EXEC_EXE;
  return c;
}

void run_validate_command(ValidateOptions options, const std::string& netns_rate, bool repeat_given,
                          std::ostream& out) {
  if (options.quick && !repeat_given) options.repeat = 1;
  if (!netns_rate.empty()) options.netns_rate = parse_netns_rate(netns_rate);
  options.command_line = command_line(options);
  ValidationReport report = validate(options, out);
  write_validation_report(report, options, out);
}

}  // namespace ws::cli
