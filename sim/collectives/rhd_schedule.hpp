// Recursive halving / doubling as a FlowSchedule: reduce-scatter by recursive halving, all-gather by
// recursive doubling, all-reduce = both (Rabenseifner; MPICH's large-message all-reduce).
#pragma once

#include <span>

#include "sim/collectives/flow_schedule.hpp"
#include "workload/collective_op.hpp"

namespace ws {

// Non-power-of-two p (MPICH's fallback): with p' the largest power of two <= p and r = p - p', the
// first 2r members pair up; each even one sends its whole input (all-reduce, reduce-scatter) or
// its block (all-gather) to its odd neighbour and sits out; the p' others run the power-of-two
// algorithm over p' blocks; then each odd one sends the result back (all-reduce: the buffer,
// reduce-scatter: the partner's block of bytes / p, all-gather: everything but the partner's own
// block). Two extra latency terms and up to bytes of extra traffic per pair, as in MPICH.
FlowSchedule rhd_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes);

}  // namespace ws
