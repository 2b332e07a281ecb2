// `weakscale calibrate`: measures this host and writes it as a machine file. The arguments as
// parsed; the work is done by harness/calibrate.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

namespace ws::cli {

struct CalibrateArgs {
  std::string out;
  std::string name;  // default: the stem of --out
  int ranks = 0;     // 0: every online core
  bool quick = false;
  std::string note;
  std::string mpi_probe;  // default: the helper built next to this binary
  std::string netns_rate;  // empty: ranks on shared memory; else harness/netns's shaped network
  std::string netns_exec;  // default: the wrapper built next to this binary
};

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args);
void run_calibrate_command(const CalibrateArgs& args, std::ostream& out);

}  // namespace ws::cli
