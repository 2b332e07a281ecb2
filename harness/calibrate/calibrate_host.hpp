// Runs every measurement of `weakscale calibrate` on this host: GEMM grid, STREAM triad, and the
// MPI probe under mpirun. Progress lines go to `progress` so a minute-long run is not silent.
#pragma once

#include <iosfwd>
#include <string>

#include "harness/calibrate/calibration.hpp"
#include "harness/process/child_process.hpp"

namespace ws {

struct CalibrateOptions {
  std::string machine_name = "local";
  std::string command_line;
  std::string note;
  std::string mpi_probe_executable;
  int ranks = 0;       // MPI ranks; 0 = every online core
  bool quick = false;  // tiny GEMM grid, small arrays, small messages: seconds, for tests
  RankLauncher launcher;        // how mpirun starts the MPI probe's ranks (harness/netns)
  std::string shaped_network;   // non-empty with a namespace launcher: Calibration::shaped_network
};

Calibration calibrate_host(const CalibrateOptions& options, std::ostream& progress);

}  // namespace ws
