// Run under mpiexec with N ranks: for every layout of N ranks that divides the tiny models (GPT and
// Llama) and
// several overlap / recomputation settings, every rank's traced engine step has exactly the
// compute phases, collectives (group, bytes, issue order) and waits the step schedule lists: the
// engine executes the schedule (its trainer's) and that schedule is the one the simulator
// (sim/step/) is given for the same run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "engine/train/trainer.hpp"
#include "tests/engine/accepted_layouts.hpp"
#include "tests/engine/step/schedule_drift.hpp"

namespace ws {
namespace {

std::vector<Layout> layouts_of(int ranks) {
  return accepted_layouts(ranks, [](const Layout& l) { return drift_runs(l).front(); });
}

TEST(StepScheduleDrift, EveryRankRunsTheScheduledStep) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::vector<Layout> layouts = layouts_of(ranks);
  EXPECT_FALSE(layouts.empty());
  for (const Layout& layout : layouts)
    for (const RunConfig& run : drift_runs(layout)) {
      try {
        validate_run(run, ranks);
      } catch (const InputError&) {
        continue;  // the Llama's 2 K/V heads do not split over this Gy
      }
      const ProcessGrid grid(MPI_COMM_WORLD, layout);
      const StepLists engine = traced_engine_step(run, grid);
      const StepLists schedule = scheduled_step(run);
      EXPECT_FALSE(engine.compute.empty()) << describe(run);
      if (ranks > 1) {
        EXPECT_FALSE(engine.collectives.empty()) << describe(run);
      }
      EXPECT_EQ(engine.compute, schedule.compute) << describe(run);
      EXPECT_EQ(engine.collectives, schedule.collectives) << describe(run);
      EXPECT_TRUE(is_subsequence(engine.waits, schedule.waits)) << describe(run);
    }
}

}  // namespace
}  // namespace ws
