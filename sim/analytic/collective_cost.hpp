// Ring alpha-beta cost of one collective (../shared/docs/4d-algorithm.md, "Cost model"): the
// closed forms every analytic estimate uses, with per-step latency alpha and ring bandwidth bw.
#pragma once

#include "engine/schedule/collective_op.hpp"
#include "base/units.hpp"

namespace ws {

// Time of a ring collective over `ranks` ranks. `full_bytes` is the whole buffer: the gathered
// output of an all-gather, the unreduced input of a reduce-scatter, the buffer of an all-reduce.
//   all-gather / reduce-scatter: (p-1) alpha + (p-1)/p M / bw
//   all-reduce (reduce-scatter + all-gather): 2(p-1) alpha + 2(p-1)/p M / bw
// One rank (p == 1) costs nothing. Launch overheads are not included (see group_path.hpp).
Time ring_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                          Time step_latency);

// Open MPI's non-blocking all-reduce (in place, as the engine calls it) and reduce-scatter
// (coll/libnbc; the flow version is sim/collectives/tree_schedule.hpp), with h = ceil(log2 p):
//   all-reduce: the whole buffer up a binomial tree and back down: 2 h (alpha + M / bw)
//   reduce-scatter: the whole buffer up the tree, then the root sends each other rank its block:
//                   h (alpha + M / bw) + alpha + (p-1)/p M / bw
//   all-gather: the ring's cost (libnbc's linear exchange moves the same bytes per rank).
Time binomial_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                              Time step_latency);

// Both models as t = steps x alpha + wire_bytes / bw (the forms above), for fits that must
// agree with them (harness/calibrate/alpha_beta_fit.hpp).
struct CollectiveTerms {
  double steps = 0;
  double wire_bytes = 0;
};
CollectiveTerms collective_terms(CollectiveOp op, int ranks, double full_bytes, bool binomial);

}  // namespace ws
