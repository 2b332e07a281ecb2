// Compute per kind from an engine trace: only rank 0's compute thread, only the steps after the
// warm-up, mean per step, waits left out; the engine's real trace for one tiny step sums to kinds
// the schedule knows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/validate/engine_trace.hpp"

namespace ws {
namespace {

StepSchedule tiny_schedule() {
  ModelSpec m;
  m.layers = 1, m.hidden = 64, m.heads = 1, m.sequence_length = 32, m.vocabulary = 256;
  return make_step_schedule(m, Layout{}, 2);
}

nlohmann::json span(const std::string& name, double dur_us, int pid = 0, int tid = 0) {
  return {{"name", name}, {"ph", "X"}, {"ts", 0}, {"dur", dur_us}, {"pid", pid}, {"tid", tid}};
}

std::string first_of_kind(const StepSchedule& s, ComputeKind kind) {
  for (const auto& op : s.ops) {
    if (op.kind == StepOpKind::compute && op.compute == kind) return op.name;
  }
  return "";
}

TEST(EngineTrace, MeanPerStepAfterWarmupOnRankZeroComputeOnly) {
  const StepSchedule s = tiny_schedule();
  const std::string start = s.ops.front().name;
  const std::string gemm = first_of_kind(s, ComputeKind::gemm);
  ASSERT_FALSE(gemm.empty());
  nlohmann::json events = nlohmann::json::array();
  for (int step = 0; step < 3; ++step) {
    events.push_back(span(start, 10));
    events.push_back(span(gemm, step == 0 ? 1e6 : 100 * step));  // the warm-up step is slow
    events.push_back(span(gemm, 500, /*pid=*/1));                // another rank
    events.push_back(span("allreduce.x", 700, 0, /*tid=*/1));    // the comm thread
    events.push_back(span("wait.allreduce.data", 300));          // exposed comm, not compute
  }
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0}});
  const auto kinds = compute_by_kind_from_trace(nlohmann::json{{"traceEvents", events}}.dump(), s, 1);
  EXPECT_NEAR(kinds.at("gemm"), 150e-6, 1e-15);  // (100 + 200) / 2 steps
  EXPECT_NEAR(kinds.at(to_string(s.ops.front().compute)), 10e-6, 1e-15);
  EXPECT_EQ(kinds.count("other"), 0u);
}

TEST(EngineTrace, UnknownNamesAreOtherAndTooFewStepsThrow) {
  const StepSchedule s = tiny_schedule();
  nlohmann::json events{span(s.ops.front().name, 1), span("fwd.mystery", 4)};
  const auto kinds = compute_by_kind_from_trace(nlohmann::json{{"traceEvents", events}}.dump(), s, 0);
  EXPECT_NEAR(kinds.at("other"), 4e-6, 1e-15);
  EXPECT_THROW(compute_by_kind_from_trace(nlohmann::json{{"traceEvents", events}}.dump(), s, 1), std::runtime_error);
  EXPECT_THROW(compute_by_kind_from_trace("not json", s, 0), std::runtime_error);
}

}  // namespace
}  // namespace ws
