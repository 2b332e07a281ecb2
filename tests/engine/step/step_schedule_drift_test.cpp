// Run under mpiexec with N ranks: for every layout of N ranks that divides the tiny models (GPT and
// Llama) and
// several overlap / recomputation settings, every rank's traced engine step has exactly the
// compute phases, collectives (group, bytes, issue order) and waits the step schedule lists: the
// engine executes the schedule (its trainer's) and that schedule is the one the simulator
// (sim/step/) is given for the same run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
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

// Pipeline stages, the other strategies' vocabulary-parallel heads, sequence parallelism and the
// distributed optimizer at ZeRO stages 1 to 3:
// each rank's trace is its stage's schedule, stage transfers included (sends and receives in issue
// order with their bytes, among the collectives), for the drift options on an 8-block GPT and Llama.
TEST(StepScheduleDrift, EveryStageRunsItsScheduledStep) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<Layout> layouts = pipeline_layouts(ranks, 8);
  for (const Layout& l : vocabulary_parallel_layouts(ranks, 8)) layouts.push_back(l);
  for (const Layout& l : sequence_parallel_layouts(ranks, 8)) layouts.push_back(l);
  // Megatron-LM's tp-pp-dp rank order: the stages' peers and the data groups elsewhere.
  if (ranks >= 4) layouts.push_back(*parse_layout("tp=1,pp=2,dp=" + std::to_string(ranks / 2) + ",mb=4,order=tp-pp-dp"));
  // The distributed optimizer (its padded buckets, reduce-scatters and parameter all-gathers).
  if (ranks >= 2) layouts.push_back(*parse_layout("tp=1,dp=" + std::to_string(ranks) + ",zero=1"));
  if (ranks >= 4) layouts.push_back(*parse_layout("tp=2,dp=" + std::to_string(ranks / 2) + ",zero=1"));
  // ZeRO-2 (gradients sharded too) and ZeRO-3 (parameters gathered layer by layer, forward and backward).
  if (ranks >= 2) layouts.push_back(*parse_layout("tp=1,dp=" + std::to_string(ranks) + ",zero=2"));
  if (ranks >= 2) layouts.push_back(*parse_layout("tp=1,dp=" + std::to_string(ranks) + ",zero=3"));
  // ... with stages: the tied embedding's own bucket, whose shards the first and last stage exchange.
  if (ranks >= 4) layouts.push_back(*parse_layout("tp=1,pp=2,dp=" + std::to_string(ranks / 2) + ",mb=2,zero=1"));
  if (ranks > 1) {
    EXPECT_FALSE(layouts.empty());
  }
  for (const Layout& layout : layouts)
    for (RunConfig run : drift_runs(layout)) {
      run.model.layers = 8;
      run.batch_sequences = 16;
      try {
        validate_run(run, ranks);
      } catch (const InputError&) {
        continue;  // the Llama's 2 K/V heads over tp = 4
      }
      const ProcessGrid grid(MPI_COMM_WORLD, layout);
      const StepLists engine = traced_engine_step(run, grid);
      const StepLists schedule = scheduled_step(run, grid.coords().stage);
      const bool transfers = std::any_of(engine.collectives.begin(), engine.collectives.end(),
                                         [](const std::string& c) { return c.starts_with("send.activations"); });
      EXPECT_EQ(transfers, layout.pipeline > 1 && (grid.coords().stage + 1 < layout.pipeline || layout.virtual_stages > 1))
          << describe(run);
      EXPECT_EQ(engine.compute, schedule.compute) << describe(run) << " stage " << grid.coords().stage;
      EXPECT_EQ(engine.collectives, schedule.collectives) << describe(run) << " stage " << grid.coords().stage;
      EXPECT_TRUE(is_subsequence(engine.waits, schedule.waits)) << describe(run);
    }
}

}  // namespace
}  // namespace ws
