// In process, one rank: the engine's traced step runs exactly the compute phases the step schedule
// lists, in the same order, for every overlap and recomputation setting (groups of one rank
// record no collectives; the multi-rank comparison is tests/engine/step/step_schedule_drift_test.cpp).
#include <gtest/gtest.h>

#include "engine/train/trainer.hpp"
#include "tests/engine/step/schedule_drift.hpp"

namespace ws {
namespace {

TEST(StepScheduleSerial, EngineRunsTheScheduledComputePhasesInOrder) {
  for (const RunConfig& run : drift_runs(Layout{})) {
    const ProcessGrid grid = ProcessGrid::serial();
    const StepLists engine = traced_engine_step(run, grid);
    const StepLists schedule = scheduled_step(run);
    EXPECT_EQ(engine.compute, schedule.compute) << describe(run);
    EXPECT_TRUE(engine.collectives.empty());
    EXPECT_TRUE(schedule.collectives.empty()) << describe(run);
    EXPECT_TRUE(schedule.waits.empty()) << describe(run);
  }
}

}  // namespace
}  // namespace ws
