// Least-squares fits of the alpha-beta model to timed messages and collectives. Pure arithmetic,
// no MPI: the calibration's measurements come in, the machine file's latency and bandwidth figures
// go out, and the tests feed synthetic data with known answers.
#pragma once

#include <vector>

#include "workload/collective_op.hpp"
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

// One timed collective over `ranks` ranks; `full_bytes` is the whole buffer (nccl-tests' size: the
// all-reduce buffer, the all-gather output, the reduce-scatter input). calibrated_machine.hpp
// fits the collective library's terms to these with the simulator's pricing.
struct TimedCollective {
  CollectiveOp op = CollectiveOp::all_reduce;
  int ranks = 2;
  double full_bytes = 0;
  double seconds = 0;
};


}  // namespace ws
