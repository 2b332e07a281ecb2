// One step's time split into phases, the same way for a measured and a simulated run: compute on
// the device and the communication each process-grid group exposes (blocking or waited for).
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "workload/step_schedule.hpp"

namespace ws {

// Exposed communication is kept per CommGroup name (kAllCommGroups, workload/comm_group.hpp),
// in that order. "world" is the gradient-norm sum; the simulator may leave it out (then it counts as 0).

// Every ComputeKind's name, in the enum's order.
inline std::vector<std::string> compute_kind_names() {
  std::vector<std::string> names;
  for (int k = 0; k <= static_cast<int>(ComputeKind::optimizer); ++k) {
    names.emplace_back(to_string(static_cast<ComputeKind>(k)));
  }
  return names;
}

struct PhaseTimes {
  double step_s = 0;
  double compute_s = 0;
  std::map<std::string, double> exposed_comm_s{};  // by group name; a missing group is 0
  // Measured only: process CPU time per step and rank. cpu_s / step_s is the share of a core each
  // rank got; well below 1, the host was busy and the wall time measures the load as well.
  double cpu_s = 0;
  // Compute per kind of op ("gemm", "gelu", ...; workload/step_schedule.hpp ComputeKind),
  // measured from rank 0's trace or simulated; a missing kind is 0.
  std::map<std::string, double> compute_by_kind_s{};
  // Part of compute_s spent inside MPI moving non-blocking collectives' data, summed over groups:
  // measured, the engine's progress_s; simulated, with a host-progressed library (0 otherwise).
  double progress_s = 0;
  // Measured only: how fast this host ran just before the run, relative to when it was calibrated
  // (a reference sgemm's rate over the machine file's rate for the same shape; 0: not measured).
  // A shared VM drifts by tens of percent within minutes; well away from 1, the error measures
  // the drift as well as the model.
  double host_speed = 0;

  double compute(const std::string& kind) const {
    const auto it = compute_by_kind_s.find(kind);
    return it == compute_by_kind_s.end() ? 0.0 : it->second;
  }

  double exposed(const std::string& group) const {
    const auto it = exposed_comm_s.find(group);
    return it == exposed_comm_s.end() ? 0.0 : it->second;
  }
};

}  // namespace ws
