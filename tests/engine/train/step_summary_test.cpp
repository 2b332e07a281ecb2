// The run summary: the methodology (warm-up steps left out, the rest averaged), the breakdown
// into computation and exposed communication per group, the flop counts of the algorithm note
// and percent of peak from the given fp32 peak (--peak).
#include "engine/train/step_summary.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "workload/flops.hpp"

namespace ws {
namespace {

ModelSpec model() { return ModelSpec{"m", 4, 1024, 16, 512, 50304, 1}; }

// Step i takes i seconds; X blocks 0.1 s per step, data waits 0.2 of 0.5 s in flight.
std::vector<StepRecord> ten_steps() {
  std::vector<StepRecord> records;
  for (int i = 1; i <= 10; ++i) {
    StepRecord r;
    r.step = i;
    r.seconds = i;
    r.communication[static_cast<std::size_t>(CommGroup::x)].blocked = Time::from_seconds(0.1);
    r.communication[static_cast<std::size_t>(CommGroup::x)].collectives = 3;
    auto& data = r.communication[static_cast<std::size_t>(CommGroup::data)];
    data.blocked = data.waited = Time::from_seconds(0.2);
    data.in_flight = Time::from_seconds(0.5);
    data.progress = Time::from_seconds(0.05);
    data.collectives = 1;
    records.push_back(r);
  }
  return records;
}

TEST(RunSummary, AveragesTheStepsAfterTheWarmUp) {
  const RunSummary s = summarize(ten_steps(), 2, model(), 4, false, 1, std::nullopt);
  EXPECT_EQ(s.measured_steps, 8);
  EXPECT_EQ(s.first_step, 3);
  EXPECT_DOUBLE_EQ(s.step_s, (3 + 4 + 5 + 6 + 7 + 8 + 9 + 10) / 8.0);
  EXPECT_DOUBLE_EQ(s.step_min_s, 3);
  EXPECT_DOUBLE_EQ(s.step_max_s, 10);
  EXPECT_NEAR(s.exposed_s, 0.3, 1e-12);
  EXPECT_NEAR(s.compute_s + s.exposed_s, s.step_s, 1e-12);  // the breakdown adds up
  EXPECT_NEAR(s.groups[static_cast<std::size_t>(CommGroup::data)].hidden_fraction(), 1 - 0.2 / 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(s.groups[static_cast<std::size_t>(CommGroup::x)].hidden_fraction(), 0.0);  // blocking only
  EXPECT_DOUBLE_EQ(s.groups[static_cast<std::size_t>(CommGroup::x)].collectives, 3);
  // Time in MPI progressing a collective is reported, and is not exposed time.
  EXPECT_DOUBLE_EQ(s.groups[static_cast<std::size_t>(CommGroup::data)].progress_s, 0.05);
  EXPECT_DOUBLE_EQ(s.groups[static_cast<std::size_t>(CommGroup::data)].exposed_s, 0.2);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 4 * 512 / s.step_s);
}

TEST(RunSummary, FlopsFollowTheAlgorithmNote) {
  const ModelSpec m = model();
  const double B = 4, S = 512, l = 4, h = 1024, V = 50304;
  const RunSummary plain = summarize(ten_steps(), 2, m, 4, false, 2, 1e11);
  const double model_flops = 72 * B * S * l * h * h * (1 + S / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(plain.model_flops, model_flops, 1e-9 * model_flops);
  EXPECT_DOUBLE_EQ(plain.hardware_flops, plain.model_flops);  // nothing recomputed
  EXPECT_NEAR(plain.percent_of_peak_model, 100 * model_flops / plain.step_s / (2 * 1e11), 1e-9);

  const RunSummary recomputed = summarize(ten_steps(), 2, m, 4, true, 2, 1e11);
  const double hardware = 96 * B * S * l * h * h * (1 + S / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(recomputed.hardware_flops, hardware, 1e-9 * hardware);
  EXPECT_GT(recomputed.percent_of_peak_hardware, recomputed.percent_of_peak_model);
}

TEST(RunSummary, PercentOfPeakUsesTheGivenPeak) {
  const RunSummary s = summarize(ten_steps(), 2, model(), 4, false, 1, 96e9);
  EXPECT_NEAR(s.percent_of_peak_model, 100 * s.model_flop_per_s / 96e9, 1e-9);
  const std::string json = summary_json(s);
  EXPECT_NE(json.find("\"peak_fp32_flop_per_s_per_device\":96000000000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"percent_of_peak_model\""), std::string::npos);
  RunConfig run;
  run.model = model();
  EXPECT_NE(csv_row(s, run).find(",9.6e+10,"), std::string::npos) << csv_row(s, run);
}

TEST(RunSummary, RejectsAWarmUpWithNothingLeftToMeasure) {
  EXPECT_THROW(summarize(ten_steps(), 10, model(), 4, false, 1, std::nullopt), std::invalid_argument);
  EXPECT_THROW(summarize(ten_steps(), -1, model(), 4, false, 1, std::nullopt), std::invalid_argument);
  EXPECT_NO_THROW(summarize(ten_steps(), 9, model(), 4, false, 1, std::nullopt));
}

TEST(RunSummary, CsvRowHasOneFieldPerHeaderColumn) {
  RunConfig run;
  run.model = model();
  run.batch_sequences = 4;
  auto fields = [](const std::string& line) { return std::count(line.begin(), line.end(), ',') + 1; };
  for (auto peak : {std::optional<double>{}, std::optional<double>{1e11}}) {
    const RunSummary s = summarize(ten_steps(), 2, model(), 4, false, 1, peak);
    EXPECT_EQ(fields(csv_row(s, run)), fields(csv_header()));
  }
}

TEST(RunSummary, ReduceStepOnOneRankIsTheRankItself) {
  StepResult local;
  local.step = 4;
  local.loss = 1.5;
  local.seconds = 0.25;
  local.communication[static_cast<std::size_t>(CommGroup::z)].blocked = Time::from_seconds(0.125);
  local.communication[static_cast<std::size_t>(CommGroup::z)].bytes = 4096;
  const Communicator serial;
  const StepRecord r = reduce_step(local, serial);
  EXPECT_EQ(r.step, 4);
  EXPECT_DOUBLE_EQ(r.seconds, 0.25);
  EXPECT_EQ(r.communication[static_cast<std::size_t>(CommGroup::z)].blocked, Time::from_seconds(0.125));
  EXPECT_EQ(r.communication[static_cast<std::size_t>(CommGroup::z)].bytes, 4096u);
}

}  // namespace
}  // namespace ws
