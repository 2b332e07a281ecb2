#include "sim/analytic/collective_cost.hpp"

#include <cmath>

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

}  // namespace ws
