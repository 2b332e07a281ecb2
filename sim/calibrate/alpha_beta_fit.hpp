// Least-squares fits of the alpha-beta model to timed messages and collectives. Pure arithmetic,
// no MPI: the calibration's measurements come in, the machine file's latency and bandwidth figures
// go out, and the tests feed synthetic data with known answers.
#pragma once

#include <vector>

#include "sim/core/collective_op.hpp"
#include "sim/core/units.hpp"

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

// The ring model the simulator uses (sim/analytic/collective_cost.hpp, group_path.cpp), with
// k = 2 for all-reduce and 1 for all-gather / reduce-scatter:
//   t = launch + k (p-1) step + k (p-1)/p M / ring_bandwidth
// `step` is the whole per-hop latency (link + library). Fitted jointly over all ops by relative
// least squares; launch and step are clamped to >= 0. All-reduce's k = 2 against the others' 1 is
// what separates launch from step when only one rank count was measured.
struct RingFit {
  Time launch_latency;
  Time step_latency;
  Bandwidth ring_bandwidth;
  double max_relative_residual = 0;
};

RingFit fit_ring_collectives(const std::vector<TimedCollective>& samples);

}  // namespace ws
