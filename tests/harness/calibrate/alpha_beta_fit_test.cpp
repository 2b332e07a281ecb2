// The fits recover the parameters that generated exact synthetic data, and clamp or reject what
// the model cannot express.
#include "harness/calibrate/alpha_beta_fit.hpp"
#include "harness/calibrate/calibrate_host.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <cmath>
#include <vector>

namespace ws {
namespace {

std::vector<TimedTransfer> exact_transfers(double alpha_s, double beta_bytes_per_s) {
  std::vector<TimedTransfer> out;
  for (double bytes = 1; bytes <= 64.0 * 1024 * 1024; bytes *= 4) out.push_back({bytes, alpha_s + bytes / beta_bytes_per_s});
  return out;
}

TEST(FitAlphaBeta, RecoversExactAlphaAndBeta) {
  for (const auto& [alpha, beta] : {std::pair{350e-9, 12e9}, std::pair{2e-6, 25e9}, std::pair{1e-3, 1e6}}) {
    const AlphaBeta fit = fit_alpha_beta(exact_transfers(alpha, beta));
    EXPECT_NEAR(fit.latency.seconds(), alpha, 1e-12) << alpha;  // within a picosecond
    EXPECT_NEAR(fit.bandwidth.bytes_per_s() / beta, 1.0, 1e-9) << beta;
    EXPECT_LT(fit.max_relative_residual, 1e-9);
  }
}

TEST(FitAlphaBeta, NegativeInterceptIsClampedToZeroAndBandwidthStillFits) {
  std::vector<TimedTransfer> samples;
  for (double bytes = 1024; bytes <= 1024.0 * 1024; bytes *= 2) samples.push_back({bytes, bytes / 10e9});
  samples.front().seconds *= 0.5;  // a too-fast small message pulls alpha below zero
  const AlphaBeta fit = fit_alpha_beta(samples);
  EXPECT_EQ(fit.latency, Time::zero());
  EXPECT_GT(fit.bandwidth.bytes_per_s(), 0.0);
}

TEST(FitAlphaBeta, NeedsTwoSizesAndPositiveTimes) {
  EXPECT_THROW(fit_alpha_beta({{1024, 1e-6}, {1024, 2e-6}}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({{1024, 1e-6}}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({{1, 1e-6}, {1024, 0.0}}), std::invalid_argument);
  // Time falling with size: no positive bandwidth explains it.
  EXPECT_THROW(fit_alpha_beta({{1, 2e-6}, {1024 * 1024, 1e-6}}), std::invalid_argument);
}

// The guard against a shaped link fitted far above its rate (calibrate_host.hpp): a link that
// carries what tbf lets through passes; one fitted at 10x the rate (the burst carried every timed
// message) is caught, and the threshold sits at kShapedFitSlack x the rate.
TEST(ShapedProbe, AFitFarAboveTheShapedRateIsCaught) {
  const Bandwidth rate = Bandwidth::from_bytes_per_s(62.5e6);
  auto fitted = [](double bytes_per_s) { return fit_alpha_beta(exact_transfers(60e-6, bytes_per_s)).bandwidth; };
  EXPECT_FALSE(faster_than_shaped(fitted(62.5e6), rate));
  EXPECT_FALSE(faster_than_shaped(fitted(0.99 * kShapedFitSlack * 62.5e6), rate));
  EXPECT_TRUE(faster_than_shaped(fitted(1.01 * kShapedFitSlack * 62.5e6), rate));
  EXPECT_TRUE(faster_than_shaped(fitted(625e6), rate));
}

}  // namespace
}  // namespace ws
