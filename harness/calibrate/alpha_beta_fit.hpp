// Least-squares fits of the alpha-beta model to timed messages and collectives. Pure arithmetic,
// no MPI: the calibration's measurements come in, the machine file's latency and bandwidth figures
// go out, and the tests feed synthetic data with known answers.
#pragma once

#include <vector>

#include "engine/schedule/collective_op.hpp"
#include "base/units.hpp"

namespace ws {

// One timed transfer: `bytes` moved in `seconds` (one way for a ping-pong).
struct TimedTransfer {
  double bytes = 0;
  double seconds = 0;
};

// t(bytes) = latency + bytes / bandwidth.
struct AlphaBeta {
  Time latency;
  Bandwidth bandwidth;
  double max_relative_residual = 0;  // max over samples of |model - measured| / measured
};

// Fits t = alpha + bytes / beta by least squares on relative errors (each residual divided by the
// measured time), so that 1-byte and 64-MiB messages weigh alike: plain least squares would let
// the largest messages decide alpha. Exact data is recovered exactly. A negative alpha (noise on
// a very fast link) is clamped to zero. Throws std::invalid_argument for fewer than two distinct
// sizes or a non-positive fitted bandwidth.
AlphaBeta fit_alpha_beta(const std::vector<TimedTransfer>& samples);

// One timed collective over `ranks` ranks with `full_bytes` as in ring_collective_time().
struct TimedCollective {
  CollectiveOp op = CollectiveOp::all_reduce;
  int ranks = 2;
  double full_bytes = 0;
  double seconds = 0;
};

// The collective model the simulator uses (sim/analytic/collective_cost.hpp, group_path.cpp):
//   t = launch + steps x step + wire_bytes / bandwidth
// with steps and wire bytes from collective_terms(): rings (k = 2 for all-reduce, 1 for the
// others: k (p-1) steps and k (p-1)/p M bytes) or, with `binomial_reductions`, Open MPI's
// non-blocking binomial all-reduce and reduce-scatter. `step` is the whole per-step latency (link
// + library). Fitted jointly over all ops by relative least squares; launch and step are clamped
// to >= 0. The ops' different step counts are what separate launch from step when only one rank
// count was measured.
struct RingFit {
  Time launch_latency;
  Time step_latency;
  Bandwidth ring_bandwidth;
  double max_relative_residual = 0;
};

RingFit fit_ring_collectives(const std::vector<TimedCollective>& samples, bool binomial_reductions = false);

}  // namespace ws
