// Properties of the GEMM efficiency interpolation and the GEMM time closed form.
#include "sim/compute/gemm_efficiency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

GemmEfficiencyTable table_of(std::initializer_list<GemmEfficiencySample> samples) {
  return GemmEfficiencyTable{std::vector<GemmEfficiencySample>(samples)};
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
