// Run under mpiexec with N ranks: for every layout of N ranks that divides the tiny model and
// several overlap / recomputation settings, every rank's traced engine step has exactly the
// compute phases, collectives (group, bytes, issue order) and waits the step schedule lists.
// This is what keeps the simulator's step (sim/step/) the engine's step.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "engine/train/trainer.hpp"
#include "tests/engine/step/schedule_drift.hpp"

namespace ws {
namespace {

std::vector<Layout> layouts_of(int ranks) {
  std::vector<Layout> out;
  for (int d = 1; d <= ranks; ++d)
    for (int x = 1; x <= ranks; ++x)
      for (int y = 1; y <= ranks; ++y)
        if (ranks % (d * x * y) == 0) {
          const Layout l{d, x, y, ranks / (d * x * y)};
          try {
            validate_run(drift_runs(l).front(), ranks);
            out.push_back(l);
          } catch (const ConfigError&) {
          }
        }
  return out;
}

TEST(StepScheduleDrift, EveryRankRunsTheScheduledStep) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::vector<Layout> layouts = layouts_of(ranks);
  EXPECT_FALSE(layouts.empty());
  for (const Layout& layout : layouts)
    for (const RunConfig& run : drift_runs(layout)) {
      const ProcessGrid grid(MPI_COMM_WORLD, layout);
      const SyntheticTokens source(run.seed, run.model.vocabulary);
      Trainer<float> trainer(run, grid, source);
      grid.timeline().set_tracing(true);
      trainer.step();
      const StepLists engine = lists_of(grid.timeline().events());
      const StepLists schedule =
          lists_of(make_step_schedule(run.model, run.layout, run.batch_sequences, schedule_options(run)));
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

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  int failed = RUN_ALL_TESTS();
  // The job passes only if every rank passed.
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
