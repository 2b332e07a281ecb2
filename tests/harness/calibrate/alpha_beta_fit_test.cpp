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

std::vector<TimedCollective> exact_collectives(double launch, double step, double bw, int ranks) {
  std::vector<TimedCollective> out;
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    const double k = op == CollectiveOp::all_reduce ? 2.0 : 1.0;
    const double p = ranks;
    for (double bytes = 8; bytes <= 64.0 * 1024 * 1024; bytes *= 4) {
      out.push_back({op, ranks, bytes, launch + k * (p - 1) * step + k * (p - 1) / p * bytes / bw});
    }
  }
  return out;
}

TEST(FitRingCollectives, RecoversLaunchStepAndBandwidthFromOneRankCount) {
  for (int ranks : {2, 3, 8}) {
    const RingFit fit = fit_ring_collectives(exact_collectives(4e-6, 1.5e-6, 6e9, ranks));
    EXPECT_NEAR(fit.launch_latency.seconds(), 4e-6, 1e-12) << ranks;
    EXPECT_NEAR(fit.step_latency.seconds(), 1.5e-6, 1e-12) << ranks;
    EXPECT_NEAR(fit.ring_bandwidth.bytes_per_s() / 6e9, 1.0, 1e-9) << ranks;
  }
}

// Open MPI's binomial all-reduce / reduce-scatter, written out by hand (2 ranks: height 1; 8: 3).
std::vector<TimedCollective> exact_binomial_collectives(double launch, double step, double bw, int ranks) {
  const double p = ranks, height = std::ceil(std::log2(p));
  std::vector<TimedCollective> out;
  for (double bytes = 8; bytes <= 64.0 * 1024 * 1024; bytes *= 4) {
    out.push_back({CollectiveOp::all_reduce, ranks, bytes, launch + 2 * height * (step + bytes / bw)});
    out.push_back({CollectiveOp::reduce_scatter, ranks, bytes,
                   launch + height * (step + bytes / bw) + step + (p - 1) / p * bytes / bw});
    out.push_back({CollectiveOp::all_gather, ranks, bytes, launch + (p - 1) * step + (p - 1) / p * bytes / bw});
  }
  return out;
}

TEST(FitRingCollectives, RecoversOpenMpiBinomialTimesWithItsTerms) {
  for (int ranks : {2, 8}) {
    const auto samples = exact_binomial_collectives(4e-6, 1.5e-6, 6e9, ranks);
    const RingFit fit = fit_ring_collectives(samples, /*binomial_reductions=*/true);
    EXPECT_NEAR(fit.launch_latency.seconds(), 4e-6, 1e-12) << ranks;
    EXPECT_NEAR(fit.step_latency.seconds(), 1.5e-6, 1e-12) << ranks;
    EXPECT_NEAR(fit.ring_bandwidth.bytes_per_s() / 6e9, 1.0, 1e-9) << ranks;
    // The ring forms cannot explain them.
    EXPECT_GT(fit_ring_collectives(samples, false).max_relative_residual, 0.1) << ranks;
  }
}

TEST(FitRingCollectives, NegativeTermsAreClampedNotReported) {
  // All-reduce no slower than all-gather at small sizes: step would come out negative.
  std::vector<TimedCollective> samples = exact_collectives(5e-6, 0.0, 6e9, 2);
  for (auto& s : samples) {
    if (s.op == CollectiveOp::all_reduce) s.seconds -= 1e-6;
  }
  const RingFit fit = fit_ring_collectives(samples);
  EXPECT_GE(fit.launch_latency, Time::zero());
  EXPECT_GE(fit.step_latency, Time::zero());
  EXPECT_GT(fit.ring_bandwidth.bytes_per_s(), 0.0);
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
