// The simulated evaluator against its parts: every candidate's step is the step simulator's for
// that layout, its analytic_step the closed form's, candidates come fastest first, and re-ranking
// never makes the chosen layout slower than the closed form's choice would run.
#include "sim/study/point_evaluation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "sim/layout_search/plan.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"
#include "sim/study/model_input.hpp"

namespace ws {
namespace {

const std::string kEvaluationMachines = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";

StudyPoint point_of(int devices, const char* model, long long sequences) {
  StudyPoint p;
  p.devices = devices;
  p.model = named_model(model, InputLocation{"test", 0, "model"}, "");
  p.batch.sequences = sequences;
  return p;
}

Time simulated(const Machine& machine, const StudyPoint& point, const Layout& layout, const StepOptions& options) {
  SimulatedStepConfig config;
  config.model = point.model;
  config.layout = layout;
  config.sequences = point.batch.sequences;
  config.options = options;
  const SimulatedStep s = simulate_step(machine, config);
  return Time::from_seconds(s.step.seconds());
}

class SimulatedEvaluator : public ::testing::TestWithParam<const char*> {};

TEST_P(SimulatedEvaluator, CandidatesAreSimulatedStepsOfTheAnalyticTopRerankedFastestFirst) {
  const Machine machine = load_machine_by_name(GetParam(), kEvaluationMachines);
  const StudyPoint point = point_of(256, "10B", 256);
  const StepOptions options;
  const PointEvaluation analytic = evaluate_point_analytic(machine, point, options, 12);
  const PointEvaluation e = evaluate_point_simulated(machine, point, options, 5, 12);
  ASSERT_TRUE(e.feasible);
  ASSERT_EQ(e.candidates.size(), 5u);
  EXPECT_EQ(e.layouts_valid, analytic.layouts_valid);
  EXPECT_EQ(e.layouts_fitting, analytic.layouts_fitting);
  for (std::size_t i = 0; i < e.candidates.size(); ++i) {
    const LayoutEstimate& c = e.candidates[i];
    if (i > 0) {
      EXPECT_LE(e.candidates[i - 1].step.total(), c.step.total());
    }
    // One of the analytic top 12, with its closed-form step kept.
    const auto from = std::find_if(analytic.candidates.begin(), analytic.candidates.end(),
                                   [&](const LayoutEstimate& a) { return a.layout == c.layout; });
    ASSERT_NE(from, analytic.candidates.end()) << to_string(c.layout);
    EXPECT_EQ(c.analytic_step, from->step.total());
    // The step simulator's step, split into compute and exposed parts that add up (to rounding).
    const Time sim = simulated(machine, point, c.layout, options);
    EXPECT_LE(std::abs((c.step.total() - sim).ps()), 8) << to_string(c.layout);
    // Same flops, so the rates scale with the inverse step.
    EXPECT_NEAR(c.sustained_flops_per_s * c.step.total().seconds(), c.hardware_flops, 1e-6 * c.hardware_flops);
  }
  // The closed form's first choice was simulated too, so the re-ranked best is no slower.
  EXPECT_LE(e.candidates.front().step.total(), simulated(machine, point, analytic.candidates.front().layout, options));
}

INSTANTIATE_TEST_SUITE_P(Machines, SimulatedEvaluator, ::testing::Values("perlmutter", "frontier", "alps"));

TEST(SimulatedEvaluator, InfeasiblePointKeepsTheAnalyticReason) {
  const Machine machine = load_machine_by_name("perlmutter", kEvaluationMachines);
  const StudyPoint point = point_of(4, "175B", 4);
  const PointEvaluation e = evaluate_point_simulated(machine, point, StepOptions{}, 3, 8);
  const PointEvaluation a = evaluate_point_analytic(machine, point, StepOptions{}, 3);
  EXPECT_FALSE(e.feasible);
  EXPECT_TRUE(e.candidates.empty());
  EXPECT_EQ(e.reason, a.reason);
}

TEST(SimulatedEvaluator, NameRecordsHowManyLayoutsAreSimulated) {
  // A resumed study reuses only results of the same evaluator.
  EXPECT_EQ(flow_evaluator(16).name, "flow top 16");
  EXPECT_EQ(closed_form_evaluator().name, "closed-form");  // the names CollectiveModel and the CLI use
  EXPECT_NE(flow_evaluator(8).name, flow_evaluator(16).name);
}

}  // namespace
}  // namespace ws
