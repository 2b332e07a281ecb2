#include "sim/analytic/collective_cost.hpp"

namespace ws {

Time ring_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                          Time step_latency) {
  if (ranks <= 1) return Time::zero();
  const std::int64_t steps = ranks - 1;
  const double p = static_cast<double>(ranks);
  const double wire_bytes = (p - 1.0) / p * full_bytes;
  const Time one_pass = steps * step_latency + transfer_time(wire_bytes, bandwidth);
  return op == CollectiveOp::all_reduce ? 2 * one_pass : one_pass;
}

}  // namespace ws
