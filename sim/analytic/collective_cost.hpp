// Alpha-beta terms of one collective (../shared/docs/4d-algorithm.md, "Cost model"): how many
// latency steps and how many bytes on the wire, the regressors of the calibration's fit.
#pragma once

#include "engine/schedule/collective_op.hpp"
#include "base/units.hpp"

namespace ws {

// Steps and wire bytes of a collective over `ranks` ranks. `full_bytes` is the whole buffer: the
// gathered output of an all-gather, the unreduced input of a reduce-scatter, the buffer of an
// all-reduce. Rings:
//   all-gather / reduce-scatter: (p-1) steps, (p-1)/p M wire bytes
//   all-reduce (reduce-scatter + all-gather): 2(p-1) steps, 2(p-1)/p M
// Open MPI's non-blocking all-reduce and reduce-scatter (coll/libnbc, `binomial`; the flow version
// is sim/collectives/tree_schedule.hpp), with h = ceil(log2 p):
//   all-reduce: the whole buffer up a binomial tree and back down: 2h steps, 2h M
//   reduce-scatter: up the tree, then the root sends each other rank its block: h+1 steps,
//                   h M + (p-1)/p M
//   all-gather: the ring's terms (libnbc's linear exchange moves the same bytes per rank).
// t = steps x alpha + wire_bytes / bw is the time of each, the form the calibration fits
// (harness/calibrate/alpha_beta_fit.hpp).
struct CollectiveTerms {
  double steps = 0;
  double wire_bytes = 0;
};
CollectiveTerms collective_terms(CollectiveOp op, int ranks, double full_bytes, bool binomial);

}  // namespace ws
