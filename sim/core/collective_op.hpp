#pragma once

// The three collectives the 4D algorithm issues. Shared by the analytic cost model and the
// discrete-event collectives so that both speak about the same operations.
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

}  // namespace ws
