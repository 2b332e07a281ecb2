// Runs every measurement of `weakscale calibrate` on this host: GEMM grid, STREAM triad, and the
// MPI probe under mpirun. Progress lines go to `progress` so a minute-long run is not silent.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "base/units.hpp"
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
  std::optional<Bandwidth> shaped_rate;  // the links' tbf rate with a namespace launcher
};

// A ping-pong fit far above the rate the links are shaped to is not a fast link: the timed
// messages rode the token bucket's burst instead of the shaped rate (an honest fit, with the burst
// and the relative-error fit, stays within ~2x: machines/local-netns.yaml 1.7x, quick runs 2.1x).
inline constexpr double kShapedFitSlack = 4.0;
inline constexpr int kShapedProbeTries = 3;
// Whether a fitted ping-pong bandwidth is above kShapedFitSlack x the shaped rate.
bool faster_than_shaped(Bandwidth fitted, Bandwidth rate);

Calibration calibrate_host(const CalibrateOptions& options, std::ostream& progress);

}  // namespace ws
