// One step's time split into phases, the same way for a measured and a simulated run: compute on
// the device and the communication each process-grid group exposes (blocking or waited for).
#pragma once

#include <array>
#include <map>
#include <string>

namespace ws {

// The engine's communicator names (engine/comm/timeline.hpp CommGroup), in its order. "world" is
// the gradient-norm sum; the simulator may leave it out (then it counts as 0).
inline constexpr std::array<const char*, 6> kCommGroupNames{"x", "y", "z", "data", "data_z", "world"};

struct PhaseTimes {
  double step_s = 0;
  double compute_s = 0;
  std::map<std::string, double> exposed_comm_s;  // by group name; a missing group is 0
  // Measured only: process CPU time per step and rank. cpu_s / step_s is the share of a core each
  // rank got; well below 1, the host was busy and the wall time measures the load as well.
  double cpu_s = 0;

  double exposed(const std::string& group) const {
    const auto it = exposed_comm_s.find(group);
    return it == exposed_comm_s.end() ? 0.0 : it->second;
  }
};

}  // namespace ws
