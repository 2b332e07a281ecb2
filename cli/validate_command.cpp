#include "cli/validate_command.hpp"

#include <cctype>
#include <filesystem>
#include <ostream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/output_file.hpp"
#include "cli/calibrate_command.hpp"
#include "harness/calibrate/host_facts.hpp"
#include "harness/netns/netns_cluster.hpp"
#include "sim/machine/machine_loader.hpp"
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
  if (o.as_written) s += " --as-written";
  if (o.trace_dir) s += " --traces " + o.trace_dir->string();
  if (o.repeat != ValidateOptions{}.repeat) s += fmt::format(" --repeat {}", o.repeat);
  if (!o.only_runs.empty()) s += " --runs " + fmt::format("{}", fmt::join(o.only_runs, ","));
  if (o.netns_rate) s += fmt::format(" --netns-rate '{:.6g} Gb/s'", 8e-9 * o.netns_rate->bytes_per_s());
  for (const auto& f : o.measured) s += " --measured " + f.string();
  return s;
}

// A machine file measured on another host (or boot) describes a host the engine will not run on:
// the issue-46 VM ran at 0.65 of the committed file's speed, and validation measured that, not the
// model. So a real validation calibrates this host first, into the output directory, and says so;
// --as-written, --quick (a smoke test), --netns-rate (the file needs namespaces to calibrate) and
// runs measured elsewhere keep the file, with a line saying why it may not describe this host.
void use_a_file_of_this_host(ValidateOptions& o, std::ostream& out) {
  if (!o.measured.empty() || !std::filesystem::is_regular_file(o.machine_file)) return;  // validate() says why
  const Machine machine = load_machine(o.machine_file);
  const HostFacts here = read_host_facts();
  const std::string reason = other_host_reason(machine.measured_on, measured_host(here));
  if (reason.empty()) return;
  if (o.as_written || o.quick || o.netns_rate) {
    const char* why = o.as_written ? "--as-written" : o.quick ? "--quick" : "--netns-rate: calibrate with it first";
    out << fmt::format("validate: {} may not describe this host ({}); validating it as written ({})", o.machine_file,
                       reason, why)
        << std::endl;
    return;
  }
  std::string host = here.hostname.empty() ? std::string("host") : here.hostname;
  for (char& ch : host)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  const std::filesystem::path calibrated = o.out_dir / fmt::format("calibrated-{}.yaml", host);
  out << fmt::format("validate: {} does not describe this host ({}); calibrating this host first into {} (about a "
                     "minute; --as-written validates the file as written)",
                     o.machine_file, reason, calibrated.string())
      << std::endl;
  std::error_code error;
  std::filesystem::create_directories(o.out_dir, error);
  if (error) throw OutputError(fmt::format("--out {}: {}", o.out_dir.string(), error.message()));
  CalibrateArgs args;
  args.out = calibrated.string();
  args.name = "local";
  args.mpi_probe = WEAKSCALE_CALIBRATE_MPI_EXE;
  args.note = fmt::format("calibrated by weakscale validate: {} was not measured on this host", o.machine_file);
  run_calibrate_command(args, out);
  o.machine_file = calibrated.string();
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
  c->add_flag("--as-written", o.as_written,
              "validate the machine file as written even when it was measured on another host or boot (otherwise "
              "validate calibrates this host first, into --out)");
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
      ->excludes(c->get_option("--netns-rate"))
      ->excludes(c->get_option("--as-written"));
  o.netns_exec_executable = WEAKSCALE_NETNS_EXEC_EXE;
  return c;
}

void run_validate_command(ValidateOptions options, const std::string& netns_rate, bool repeat_given,
                          std::ostream& out) {
  if (options.quick && !repeat_given) options.repeat = 1;
  if (!netns_rate.empty()) options.netns_rate = parse_netns_rate(netns_rate);
  options.command_line = command_line(options);
  use_a_file_of_this_host(options, out);
  ValidationReport report = validate(options, out);
  write_validation_report(report, options, out);
}

}  // namespace ws::cli
