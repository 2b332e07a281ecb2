// Properties of the GEMM efficiency interpolation and the GEMM time closed form.
#include "sim/compute/gemm_efficiency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

GemmEfficiencyTable table_of(std::initializer_list<GemmEfficiencySample> samples) {
  return make_gemm_table(std::vector<GemmEfficiencySample>(samples));
}

const GemmEfficiencyTable kTable = table_of({{128, 128, 128, 0.05},
                                             {1024, 1024, 1024, 0.6},
                                             {1024, 10240, 5120, 0.87},
                                             {4096, 4096, 4096, 0.8}});

TEST(GemmEfficiency, ExactSampleIsReturnedAsIs) {
  for (const auto& s : kTable.samples) EXPECT_EQ(gemm_efficiency(kTable, s.m, s.n, s.k), s.efficiency);
}

TEST(GemmEfficiency, SingleSampleIsConstant) {
  const auto table = table_of({{2048, 2048, 2048, 0.7}});
  for (const double size : {1.0, 64.0, 3000.0, 1e6}) {
    EXPECT_DOUBLE_EQ(gemm_efficiency(table, size, 2 * size, 7), 0.7) << size;
  }
}

TEST(GemmEfficiency, InterpolatedValueLiesBetweenSamples) {
  double lo = 1.0, hi = 0.0;
  for (const auto& s : kTable.samples) {
    lo = std::min(lo, s.efficiency);
    hi = std::max(hi, s.efficiency);
  }
  for (const double m : {16.0, 300.0, 2000.0, 65536.0}) {
    for (const double k : {64.0, 777.0, 16384.0}) {
      const double e = gemm_efficiency(kTable, m, 3000, k);
      EXPECT_GT(e, lo);
      EXPECT_LT(e, hi);
    }
  }
}

TEST(GemmEfficiency, NearerSampleDominates) {
  // Just above the small sample the efficiency is close to it, just below the large one close to that.
  EXPECT_LT(gemm_efficiency(kTable, 130, 130, 130), 0.1);
  EXPECT_GT(gemm_efficiency(kTable, 4000, 4000, 4000), 0.75);
}

TEST(GemmEfficiency, InvariantToUniformScalingOfAllSamplesAndQuery) {
  // Log-space distances: scaling every shape by 2 changes no distance.
  GemmEfficiencyTable scaled = kTable;
  for (auto& s : scaled.samples) {
    s.m *= 2;
    s.n *= 2;
    s.k *= 2;
  }
  EXPECT_NEAR(gemm_efficiency(kTable, 300, 700, 900), gemm_efficiency(scaled, 600, 1400, 1800), 1e-12);
}

// A function multilinear in (log2 m, log2 n, log2 k): the grid interpolation must reproduce it
// exactly between samples, whatever the spacing of the axes.
double multilinear_truth(double m, double n, double k) {
  const double a = std::log2(m), b = std::log2(n), c = std::log2(k);
  return 0.05 + 0.004 * a + 0.003 * b + 0.002 * c + 0.0004 * a * b + 0.0003 * b * c + 0.0002 * a * c +
         0.00001 * a * b * c;
}

GemmEfficiencyTable grid_of(const std::vector<double>& ms, const std::vector<double>& ns,
                            const std::vector<double>& ks) {
  std::vector<GemmEfficiencySample> samples;
  // Listed k-major, unlike the index's m-major order, so that the index must sort them out.
  for (const double k : ks)
    for (const double n : ns)
      for (const double m : ms) samples.push_back({m, n, k, multilinear_truth(m, n, k)});
  return make_gemm_table(std::move(samples));
}

const std::vector<double> kMs = {64, 256, 512, 8192}, kNs = {128, 4096}, kKs = {32, 64, 1024, 2048, 65536};

TEST(GemmEfficiencyGrid, EveryCombinationIsAGridAndAnythingElseIsNot) {
  const GemmEfficiencyTable grid = grid_of(kMs, kNs, kKs);
  ASSERT_TRUE(grid.grid.has_value());
  EXPECT_EQ(grid.grid->sample_at.size(), kMs.size() * kNs.size() * kKs.size());
  auto with_extra = grid.samples;
  with_extra.push_back({1000, 1000, 1000, 0.5});  // a shape off the grid
  EXPECT_FALSE(make_gemm_table(with_extra).grid.has_value());
  auto missing = grid.samples;
  missing.pop_back();
  EXPECT_FALSE(make_gemm_table(missing).grid.has_value());
  auto duplicated = grid.samples;  // as many samples as grid points, but one point twice
  duplicated.back() = duplicated.front();
  EXPECT_FALSE(make_gemm_table(duplicated).grid.has_value());
  EXPECT_FALSE(kTable.grid.has_value());
}

TEST(GemmEfficiencyGrid, SamplesAreReturnedExactly) {
  const GemmEfficiencyTable grid = grid_of(kMs, kNs, kKs);
  for (const auto& s : grid.samples) EXPECT_EQ(gemm_efficiency(grid, s.m, s.n, s.k), s.efficiency);
}

TEST(GemmEfficiencyGrid, ReproducesAMultilinearFunctionBetweenSamples) {
  const GemmEfficiencyTable grid = grid_of(kMs, kNs, kKs);
  for (const double m : {64.0, 100.0, 300.0, 511.0, 3000.0, 8192.0})
    for (const double n : {128.0, 129.0, 1000.0, 4000.0})
      for (const double k : {33.0, 100.0, 1500.0, 20000.0, 65536.0})
        EXPECT_NEAR(gemm_efficiency(grid, m, n, k), multilinear_truth(m, n, k), 1e-12) << m << " " << n << " " << k;
}

TEST(GemmEfficiencyGrid, ClampsToTheEdgeOutsideTheGrid) {
  const GemmEfficiencyTable grid = grid_of(kMs, kNs, kKs);
  EXPECT_NEAR(gemm_efficiency(grid, 1e6, 300, 1e7), multilinear_truth(8192, 300, 65536), 1e-12);
  EXPECT_NEAR(gemm_efficiency(grid, 1, 1, 1), multilinear_truth(64, 128, 32), 1e-12);
}

TEST(GemmEfficiencyGrid, ScalingTheSamplesScalesTheInterpolation) {
  // The index holds shapes only, so the uncertainty study's in-place scaling of efficiencies is seen.
  GemmEfficiencyTable grid = grid_of(kMs, kNs, kKs);
  const double before = gemm_efficiency(grid, 300, 1000, 1500);
  for (auto& s : grid.samples) s.efficiency *= 0.5;
  EXPECT_NEAR(gemm_efficiency(grid, 300, 1000, 1500), 0.5 * before, 1e-12);
}

TEST(GemmEfficiencyGrid, OneValueOnAnAxisIsConstantAlongIt) {
  const GemmEfficiencyTable grid = grid_of({1024}, {256, 1024}, {2048});
  ASSERT_TRUE(grid.grid.has_value());
  EXPECT_NEAR(gemm_efficiency(grid, 7, 512, 1e6), multilinear_truth(1024, 512, 2048), 1e-12);
}

TEST(GemmTime, ClosedForm) {
  DeviceSpec device;
  device.peak_bf16 = FlopRate::from_tflops(100);
  device.peak_fp32 = FlopRate::from_tflops(10);
  device.gemm = table_of({{1024, 1024, 1024, 0.5}});
  const double m = 1024, n = 2048, k = 4096;
  const Time expected = Time::from_seconds(2 * m * n * k / (0.5 * 100e12));
  EXPECT_EQ(gemm_time(device, Precision::bf16, m, n, k), expected);
  // The precision picks the peak: fp32 here has a tenth of the bf16 rate.
  EXPECT_EQ(gemm_time(device, Precision::fp32, m, n, k), Time::from_seconds(2 * m * n * k / (0.5 * 10e12)));
}

TEST(GemmTime, ShippedTablesLoseEfficiencyOnSmallShapes) {
  for (const std::string name : {"perlmutter", "frontier", "alps"}) {
    SCOPED_TRACE(name);
    const Machine machine = load_machine_by_name(name, std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
    const auto& table = machine.device.gemm;
    EXPECT_LT(gemm_efficiency(table, 256, 256, 256), gemm_efficiency(table, 1024, 1024, 1024));
    EXPECT_LT(gemm_efficiency(table, 1024, 1024, 1024), gemm_efficiency(table, 4096, 4096, 4096));
    // Work grows 8x per doubling of each side, time must grow, never shrink.
    EXPECT_LT(gemm_time(machine.device, Precision::bf16, 2048, 2048, 2048),
              gemm_time(machine.device, Precision::bf16, 4096, 4096, 4096));
  }
}

}  // namespace
}  // namespace ws
