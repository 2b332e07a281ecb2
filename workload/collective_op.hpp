#pragma once

// The three collectives the 4D algorithm issues: one name for the engine's step schedule, the
// analytic cost model and the discrete-event collectives.
namespace ws {

enum class CollectiveOp { all_reduce, reduce_scatter, all_gather };

// "all-reduce", "reduce-scatter", "all-gather": the spelling used in reports and CLI flags.
constexpr const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all-reduce";
    case CollectiveOp::reduce_scatter: return "reduce-scatter";
    case CollectiveOp::all_gather: return "all-gather";
  }
  return "?";
}

// "allreduce", "reducescatter", "allgather": the engine's spelling in trace event names
// ("allreduce.x", "wait.reducescatter.z"), which the simulator reproduces.
constexpr const char* trace_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "allreduce";
    case CollectiveOp::reduce_scatter: return "reducescatter";
    case CollectiveOp::all_gather: return "allgather";
  }
  return "?";
}

}  // namespace ws
