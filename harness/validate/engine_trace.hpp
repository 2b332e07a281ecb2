// Measured compute time per kind ("gemm", "gelu", "attention", ...) from the engine's trace, so
// that a step-time error can be traced to the kind of op the simulator prices wrongly. The step
// schedule (workload/step_schedule.hpp) names every compute event the engine writes and
// says what kind it is.
#pragma once

#include <map>
#include <string>

#include "workload/step_schedule.hpp"

namespace ws {

// Rank 0's compute events (pid 0, compute thread) of the steps after the first `warmup_steps`,
// summed per kind and divided by the number of those steps. A step begins at each event named
// like the schedule's first op. Events the schedule does not name count as "other".
// Throws std::runtime_error when the trace is not JSON or has no step after the warmup.
std::map<std::string, double> compute_by_kind_from_trace(const std::string& trace_json, const StepSchedule& schedule,
                                                         int warmup_steps);

}  // namespace ws
