#include "cli/calibrate_command.hpp"

#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "harness/calibrate/calibrate_host.hpp"
#include "harness/calibrate/machine_yaml_writer.hpp"
#include "base/input_error.hpp"
#include "base/output_file.hpp"
#include "sim/machine/machine_loader.hpp"
#include "harness/netns/netns_cluster.hpp"

namespace ws::cli {
namespace {

// The command as a user would retype it, for the file header.
std::string command_line(const CalibrateArgs& a) {
  std::string s = "weakscale calibrate --out " + a.out;
  if (!a.name.empty()) s += " --name " + a.name;
  if (a.ranks > 0) s += fmt::format(" --ranks {}", a.ranks);
  if (a.quick) s += " --quick";
  if (!a.netns_rate.empty()) s += " --netns-rate '" + a.netns_rate + "'";
  if (!a.note.empty()) s += " --note '" + a.note + "'";
  return s;
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& a) {
  CLI::App* c = app.add_subcommand(
      "calibrate", "Measure this host (GEMM, memory bandwidth, MPI between ranks) and write a machine file");
  c->add_option("--out", a.out, "machine file to write, e.g. machines/local.yaml")->required();
  c->add_option("--name", a.name, "machine name in the file (default: the file's stem)");
  c->add_option("--ranks", a.ranks, "MPI ranks (= devices) to measure with (default: every online core)")
      ->check(CLI::Range(2, 4096));
  c->add_flag("--quick", a.quick, "tiny grids and messages (seconds; for tests, not for real figures)");
  c->add_option("--note", a.note, "a line for the file header (e.g. how quiet the host was)");
  a.mpi_probe = WEAKSCALE_CALIBRATE_MPI_EXE;
  c->add_option("--mpi-probe", a.mpi_probe, "path of the weakscale-calibrate-mpi helper")->capture_default_str();
  c->add_option("--netns-rate", a.netns_rate,
                "measure MPI with every rank in its own network namespace, joined by veth links shaped to this "
                "rate (e.g. '1 Gb/s'), over TCP: the file gets one node per rank (needs root)");
  a.netns_exec = WEAKSCALE_NETNS_EXEC_EXE;
  return c;
}

void run_calibrate_command(const CalibrateArgs& a, std::ostream& out) {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (a.ranks > 0 && cores > 0 && a.ranks > cores) {
    throw InputError(InputLocation{"", 0, "--ranks"}, std::to_string(a.ranks),
                     fmt::format("at most the {} online cores of this host (one rank per core)", cores));
  }
  const std::filesystem::path path(a.out);
  // Before the minute of measuring: an --out that cannot be written is an output error now.
  try {
    check_output_path(path);
  } catch (const OutputError& e) {
    throw OutputError(std::string("--out ") + e.what());
  }
  CalibrateOptions options;
  options.machine_name = a.name.empty() ? path.stem().string() : a.name;
  options.command_line = command_line(a);
  options.note = a.note;
  options.mpi_probe_executable = a.mpi_probe;
  options.ranks = a.ranks;
  options.quick = a.quick;
  std::optional<ShapedNetwork> network;
  if (!a.netns_rate.empty()) {
    const Bandwidth rate = parse_netns_rate(a.netns_rate);
    const int ranks = a.ranks > 0 ? a.ranks : static_cast<int>(std::max(2L, cores));
    options.ranks = ranks;  // one namespace per rank the probe starts
    network.emplace(ShapedNetworkSpec{ranks, rate, ""}, a.netns_exec);
    options.launcher = network->launcher();
    options.shaped_network = network->describe();
    options.shaped_rate = rate;
    out << "calibrate: network: " << options.shaped_network << std::endl;
  }
  const Calibration calibration = calibrate_host(options, out);
  const std::string yaml = format_calibrated_machine_yaml(calibration);
  parse_machine(yaml, a.out);  // the file must load; a failure here is a writer bug, not bad input
  write_file_atomically(a.out, yaml);  // a failed write keeps the previous machine file whole
  out << "calibrate: wrote " << a.out << std::endl;
}

}  // namespace ws::cli
