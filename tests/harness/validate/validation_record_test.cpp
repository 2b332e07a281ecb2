// Error statistics on known inputs: relative error sign, median of odd and even counts, the worst
// run and the phase that is off most in it.
#include <gtest/gtest.h>

#include <optional>

#include "harness/validate/validation_record.hpp"

namespace ws {
namespace {

ValidationRecord record(double measured_s, std::optional<double> simulated_s) {
  ValidationRecord r;
  r.measured = PhaseTimes{measured_s, measured_s, {}};
  if (simulated_s) r.simulated = PhaseTimes{*simulated_s, *simulated_s, {}};
  return r;
}

TEST(RelativeError, PositiveWhenTheSimulatorIsSlow) {
  EXPECT_NEAR(relative_error(2.0, 2.2), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(relative_error(2.0, 1.5), -0.25);
}

TEST(SummarizeErrors, MedianAndWorstOfAnOddCount) {
  const std::vector<ValidationRecord> records{record(1.0, 1.02), record(1.0, 0.9), record(2.0, 2.1)};
  const auto s = summarize_errors(records);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->runs, 3u);
  EXPECT_NEAR(s->median_abs_error, 0.05, 1e-12);
  EXPECT_NEAR(s->worst_abs_error, 0.1, 1e-12);
  EXPECT_EQ(s->worst_record, 1u);
}

TEST(SummarizeErrors, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  const std::vector<ValidationRecord> records{record(1.0, 1.01), record(1.0, 1.03), record(1.0, 0.95),
                                              record(1.0, 1.2)};
  const auto s = summarize_errors(records);
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->median_abs_error, 0.04, 1e-12);
  EXPECT_NEAR(s->worst_abs_error, 0.2, 1e-12);
  EXPECT_EQ(s->worst_record, 3u);
}

TEST(SummarizeErrors, SkipsRunsWithoutASimulation) {
  EXPECT_FALSE(summarize_errors({record(1.0, std::nullopt)}));
  const auto s = summarize_errors({record(1.0, std::nullopt), record(1.0, 1.1)});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->runs, 1u);
  EXPECT_EQ(s->worst_record, 1u);
}

TEST(PhaseOffMost, PicksTheLargestAbsoluteDifference) {
  const PhaseTimes measured{1.0, 0.6, {{"x", 0.3}, {"data_z", 0.1}}};
  const PhaseTimes simulated{0.9, 0.62, {{"x", 0.1}, {"y", 0.05}}};
  const auto d = phase_off_most(measured, simulated);
  EXPECT_EQ(d.phase, "x");
  EXPECT_DOUBLE_EQ(d.measured_s, 0.3);
  EXPECT_DOUBLE_EQ(d.simulated_s, 0.1);
  EXPECT_EQ(phase_off_most(PhaseTimes{1, 1, {}}, PhaseTimes{2, 2, {}}).phase, "compute");
}

TEST(ComputeKinds, OffMostAndTotalsOverSimulatedRuns) {
  ValidationRecord a = record(1.0, 1.0), b = record(1.0, 1.0), unsimulated = record(1.0, std::nullopt);
  a.measured.compute_by_kind_s = {{"gemm", 0.5}, {"gelu", 0.3}};
  a.simulated->compute_by_kind_s = {{"gemm", 0.45}, {"gelu", 0.05}};
  b.measured.compute_by_kind_s = {{"gemm", 0.2}};
  b.simulated->compute_by_kind_s = {{"gemm", 0.25}, {"attention", 0.1}};
  unsimulated.measured.compute_by_kind_s = {{"gemm", 9.0}};
  EXPECT_EQ(compute_kind_off_most(a.measured, *a.simulated).phase, "gelu");
  const auto totals = compute_totals_by_kind({a, b, unsimulated});
  ASSERT_EQ(totals.size(), 3u);  // gemm, attention, gelu in ComputeKind order
  EXPECT_EQ(totals[0].phase, "gemm");
  EXPECT_NEAR(totals[0].measured_s, 0.7, 1e-12);
  EXPECT_NEAR(totals[0].simulated_s, 0.7, 1e-12);
  EXPECT_EQ(totals[1].phase, "attention");
  EXPECT_EQ(totals[2].phase, "gelu");
}

TEST(SummarizeErrors, NamesThePhaseOffMostInTheWorstRun) {
  ValidationRecord good = record(1.0, 1.0);
  ValidationRecord bad;
  bad.measured = PhaseTimes{1.0, 0.7, {{"y", 0.3}}};
  bad.simulated = PhaseTimes{1.4, 0.75, {{"y", 0.65}}};
  const auto s = summarize_errors({good, bad});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->worst_record, 1u);
  EXPECT_EQ(s->worst_phase.phase, "y");
}

TEST(MedianCoreShare, IsCpuOverWallTimeOfTheMeasuredRuns) {
  ValidationRecord busy = record(1.0, 1.0), quiet = record(2.0, 2.0), unknown = record(1.0, 1.0);
  busy.measured.cpu_s = 0.4;
  quiet.measured.cpu_s = 1.9;
  EXPECT_NEAR(median_core_share({busy, quiet, unknown}), 0.675, 1e-12);  // unknown (cpu_s 0) skipped
  EXPECT_EQ(median_core_share({unknown}), 0.0);
}

}  // namespace
}  // namespace ws
