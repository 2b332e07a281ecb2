// Runs every measurement of `weakscale calibrate` on this host: GEMM grid, STREAM triad, and the
// MPI probe under mpirun. Progress lines go to `progress` so a minute-long run is not silent.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/units.hpp"
#include "harness/calibrate/alpha_beta_fit.hpp"
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

// A ping-pong fit far above the rate the links are shaped to is not a fast link: the ranks lost
// their cores while timing, so the small messages' times swamp the slope (the tbf burst and the
// relative-error fit leave an honest fit up to ~2x the rate: machines/local-netns.yaml, 1.7x).
inline constexpr double kShapedFitSlack = 4.0;
inline constexpr int kShapedProbeTries = 3;
// Whether the ping-pong samples fit a bandwidth above kShapedFitSlack x rate.
bool faster_than_shaped(const std::vector<TimedTransfer>& ping_pong, Bandwidth rate);

Calibration calibrate_host(const CalibrateOptions& options, std::ostream& progress);

}  // namespace ws
