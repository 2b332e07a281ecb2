// The interleaved sampler: one untimed warm-up call per probe, then passes in probe order, and each
// probe's median over its passes only. Plus the GEMM probes' rates on a tiny grid.
#include <gtest/gtest.h>

#include <vector>

#include "harness/calibrate/gemm_probe.hpp"
#include "harness/calibrate/interleaved_timing.hpp"

namespace ws {
namespace {

TEST(InterleavedTiming, WarmsUpThenRunsPassesInProbeOrder) {
  std::vector<int> calls;
  // Probe p's c-th call returns (p + 1) * c: its warm-up (c = 0) must not count.
  std::vector<int> count(3, 0);
  std::vector<TimedProbe> probes;
  for (int p = 0; p < 3; ++p) {
    probes.emplace_back([&, p] {
      calls.push_back(p);
      return static_cast<double>((p + 1) * count[static_cast<std::size_t>(p)]++);
    });
  }
  const auto medians = interleaved_median_seconds(probes, 4);
  EXPECT_EQ(calls, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  // Passes 1..4: median of {1, 2, 3, 4} = 2.5, scaled by p + 1.
  ASSERT_EQ(medians.size(), 3u);
  EXPECT_DOUBLE_EQ(medians[0], 2.5);
  EXPECT_DOUBLE_EQ(medians[1], 5.0);
  EXPECT_DOUBLE_EQ(medians[2], 7.5);
}

TEST(InterleavedTiming, AtLeastOnePass) {
  int called = 0;
  const auto medians = interleaved_median_seconds({[&] { return static_cast<double>(++called); }}, 0);
  EXPECT_EQ(called, 2);  // warm-up and one pass
  EXPECT_DOUBLE_EQ(medians.at(0), 2.0);
}

TEST(GemmGridProbes, GiveAPositiveRateForEveryShapeAndVariantInGridOrder) {
  GemmGrid grid;
  grid.shapes = {{32, 16, 8}, {8, 64, 32}};
  grid.repetitions = 2;
  const GemmMeasurements m = measure_gemm(grid);
  ASSERT_EQ(m.rates.size(), 2u);
  for (std::size_t i = 0; i < m.rates.size(); ++i) {
    EXPECT_EQ(m.rates[i].m, grid.shapes[i].m);
    EXPECT_EQ(m.rates[i].n, grid.shapes[i].n);
    EXPECT_EQ(m.rates[i].k, grid.shapes[i].k);
    EXPECT_GT(m.rates[i].nn_flops, 0);
    EXPECT_GT(m.rates[i].nt_flops, 0);
    EXPECT_GT(m.rates[i].tn_flops, 0);
  }
  EXPECT_FALSE(m.blas.empty());
}

}  // namespace
}  // namespace ws
