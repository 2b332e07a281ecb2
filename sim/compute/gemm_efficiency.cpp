// GEMM efficiency by inverse-distance weighting in log2(m, n, k) space: shapes that differ by the
// same factor are equally far apart, which matches how tiling efficiency changes with size.
#include "sim/compute/gemm_efficiency.hpp"

#include <cassert>
#include <cmath>

namespace ws {

double gemm_efficiency(const GemmEfficiencyTable& table, double m, double n, double k) {
  assert(!table.samples.empty() && "the machine loader guarantees at least one sample");
  assert(m > 0 && n > 0 && k > 0);
  const double lm = std::log2(m), ln = std::log2(n), lk = std::log2(k);
  double weight_sum = 0.0;
  double weighted = 0.0;
  for (const auto& s : table.samples) {
    const double dm = lm - std::log2(s.m), dn = ln - std::log2(s.n), dk = lk - std::log2(s.k);
    const double distance_squared = dm * dm + dn * dn + dk * dk;
    // Power 2: weight = 1 / distance^2, which is 1 / distance_squared; an exact hit wins outright.
    if (distance_squared == 0.0) return s.efficiency;
    const double weight = 1.0 / distance_squared;
    weight_sum += weight;
    weighted += weight * s.efficiency;
  }
  return weighted / weight_sum;
}

Time gemm_time(const DeviceSpec& device, Precision precision, double m, double n, double k) {
  const double efficiency = gemm_efficiency(device.gemm, m, n, k);
  return compute_time(2.0 * m * n * k, peak(device, precision) * efficiency);
}

}  // namespace ws
