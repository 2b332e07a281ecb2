// Ring alpha-beta cost of one collective (../shared/docs/4d-algorithm.md, "Cost model"): the
// closed forms every analytic estimate uses, with per-step latency alpha and ring bandwidth bw.
#pragma once

#include "sim/core/collective_op.hpp"
#include "sim/core/units.hpp"

namespace ws {

// Time of a ring collective over `ranks` ranks. `full_bytes` is the whole buffer: the gathered
// output of an all-gather, the unreduced input of a reduce-scatter, the buffer of an all-reduce.
//   all-gather / reduce-scatter: (p-1) alpha + (p-1)/p M / bw
//   all-reduce (reduce-scatter + all-gather): 2(p-1) alpha + 2(p-1)/p M / bw
// One rank (p == 1) costs nothing. Launch overheads are not included (see group_path.hpp).
Time ring_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                          Time step_latency);

}  // namespace ws
