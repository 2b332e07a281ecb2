#include "sim/analytic/collective_cost.hpp"

#include <cmath>
#include <cstdint>

namespace ws {

CollectiveTerms collective_terms(CollectiveOp op, int ranks, double full_bytes, bool binomial) {
  if (ranks <= 1) return {};
  const double p = static_cast<double>(ranks);
  const double pass_bytes = (p - 1.0) / p * full_bytes;
  if (binomial && op != CollectiveOp::all_gather) {
    double height = 0;
    while (std::ldexp(1.0, static_cast<int>(height)) < p) ++height;
    if (op == CollectiveOp::all_reduce) return {2 * height, 2 * height * full_bytes};
    return {height + 1, height * full_bytes + pass_bytes};
  }
  const double k = op == CollectiveOp::all_reduce ? 2.0 : 1.0;
  return {k * (p - 1.0), k * pass_bytes};
}

Time ring_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                          Time step_latency) {
  if (ranks <= 1) return Time::zero();
  const std::int64_t steps = ranks - 1;
  const double p = static_cast<double>(ranks);
  const double wire_bytes = (p - 1.0) / p * full_bytes;
  const Time one_pass = steps * step_latency + transfer_time(wire_bytes, bandwidth);
  return op == CollectiveOp::all_reduce ? 2 * one_pass : one_pass;
}

Time binomial_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                              Time step_latency) {
  if (ranks <= 1) return Time::zero();
  if (op == CollectiveOp::all_gather) return ring_collective_time(op, ranks, full_bytes, bandwidth, step_latency);
  const auto terms = collective_terms(op, ranks, full_bytes, true);
  const auto height = static_cast<std::int64_t>(op == CollectiveOp::all_reduce ? terms.steps / 2 : terms.steps - 1);
  const Time whole = step_latency + transfer_time(full_bytes, bandwidth);
  if (op == CollectiveOp::all_reduce) return 2 * height * whole;
  const double p = static_cast<double>(ranks);
  return height * whole + step_latency + transfer_time((p - 1.0) / p * full_bytes, bandwidth);
}

}  // namespace ws
