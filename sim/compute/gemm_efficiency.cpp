// GEMM efficiency from the machine file's samples, in log2(m, n, k) space: shapes that differ by the
// same factor are equally far apart, which matches how tiling efficiency changes with size.
//
// A full grid (a measured sweep) is interpolated multilinearly between the eight surrounding samples
// and clamped at its edges. Scattered samples (a best shape and a few estimates) use inverse-distance
// weighting. IDW is not used on grids because with hundreds of samples in three dimensions the
// far ones outweigh the near ones (their count at distance d grows as d^2, as fast as 1/d^2 falls):
// on the measured H100 sweep, predicting every other size from the rest, IDW was off by a median
// 19 % and the multilinear form by 4 % (results/gpu/README.md).
#include "sim/compute/gemm_efficiency.hpp"
#include "base/check.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ws {
namespace {

// The lower grid index and the weight of the upper one for a coordinate, clamped to the axis.
struct AxisStep {
  std::size_t lower = 0;
  double upper_weight = 0.0;
};

AxisStep locate(const std::vector<double>& axis, double value) {
  if (axis.size() == 1 || value <= axis.front()) return {0, 0.0};
  if (value >= axis.back()) return {axis.size() - 2, 1.0};
  const auto upper = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), value) - axis.begin());
  const std::size_t lower = upper - 1;
  return {lower, (value - axis[lower]) / (axis[upper] - axis[lower])};
}

double grid_efficiency(const GemmEfficiencyTable& table, double lm, double ln, double lk) {
  const GemmEfficiencyGrid& grid = *table.grid;
  const std::array<AxisStep, 3> step = {locate(grid.log2_axis[0], lm), locate(grid.log2_axis[1], ln),
                                        locate(grid.log2_axis[2], lk)};
  const std::size_t nn = grid.log2_axis[1].size(), nk = grid.log2_axis[2].size();
  double value = 0.0;
  for (int corner = 0; corner < 8; ++corner) {
    double weight = 1.0;
    std::array<std::size_t, 3> at{};
    for (std::size_t axis = 0; axis < 3; ++axis) {
      const bool upper = (corner >> axis) & 1;
      const AxisStep& s = step[axis];
      weight *= upper ? s.upper_weight : 1.0 - s.upper_weight;
      // An axis of one value has no upper neighbour; its upper weight is always 0.
      at[axis] = std::min(s.lower + (upper ? 1 : 0), grid.log2_axis[axis].size() - 1);
    }
    if (weight == 0.0) continue;  // so that a sample's own shape returns it exactly
    value += weight * table.samples[grid.sample_at[(at[0] * nn + at[1]) * nk + at[2]]].efficiency;
  }
  return value;
}

}  // namespace

double gemm_efficiency(const GemmEfficiencyTable& table, double m, double n, double k) {
  WS_CHECK(!table.samples.empty(), "the machine loader guarantees at least one sample");
  WS_CHECK(m > 0 && n > 0 && k > 0, "a GEMM of positive dimensions");
  const double lm = std::log2(m), ln = std::log2(n), lk = std::log2(k);
  if (table.grid) return grid_efficiency(table, lm, ln, lk);
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
  if (!(m > 0 && n > 0 && k > 0)) return Time::zero();  // an empty product does no work
  const double efficiency = gemm_efficiency(device.gemm, m, n, k);
  return compute_time(2.0 * m * n * k, peak(device, precision) * efficiency);
}

}  // namespace ws
