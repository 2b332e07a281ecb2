// The validation matrix: size, coverage of layouts and overlap switches, and that every run is a
// configuration the engine accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "engine/train/run_config.hpp"
#include "harness/validate/validation_run.hpp"

namespace ws {
namespace {

bool has_run(const std::vector<ValidationRun>& runs, const Layout& layout, bool overlap_on) {
  return std::any_of(runs.begin(), runs.end(), [&](const ValidationRun& r) {
    const StepScheduleOptions& o = r.schedule;
    return r.layout == layout && all_overlaps_on(o) == overlap_on &&
           (overlap_on || !(o.overlap_all_reduce || o.overlap_reduce_scatter || o.overlap_all_gather ||
                            o.overlap_data_parallel));
  });
}

TEST(ValidationMatrix, HasAtLeastThirtyRunsOnTwoRanks) {
  const auto runs = validation_matrix(MatrixOptions{2, false});
  EXPECT_GE(runs.size(), 30u);
  for (const auto& r : runs) EXPECT_LE(r.ranks(), 2);
}

TEST(ValidationMatrix, CoversEveryTwoRankLayoutWithOverlapOnAndOff) {
  const auto runs = validation_matrix(MatrixOptions{2, false});
  for (const Layout& layout : {Layout{2, 1, 1, 1}, Layout{1, 2, 1, 1}, Layout{1, 1, 2, 1}, Layout{1, 1, 1, 2}}) {
    EXPECT_TRUE(has_run(runs, layout, true)) << to_string(layout);
    EXPECT_TRUE(has_run(runs, layout, false)) << to_string(layout);
  }
  EXPECT_TRUE(has_run(runs, Layout{}, true));
}

TEST(ValidationMatrix, SeveralModelSizesAndRecompute) {
  const auto runs = validation_matrix(MatrixOptions{2, false});
  std::set<std::string> models;
  for (const auto& r : runs) models.insert(r.model.name);
  EXPECT_GE(models.size(), 3u);
  EXPECT_TRUE(std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.schedule.recompute; }));
}

// Two pipeline stages under both schedules, and micro-batches on one rank.
TEST(ValidationMatrix, CoversPipelinesUnderBothSchedules) {
  const auto runs = validation_matrix(MatrixOptions{2, false});
  auto has = [&](auto predicate) { return std::any_of(runs.begin(), runs.end(), predicate); };
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.pipeline == 2 && r.layout.virtual_stages == 1; }));
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.pipeline == 2 && r.layout.virtual_stages == 2; }));
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.pipeline == 1 && r.layout.micro_batches > 1; }));
}

// Megatron-LM's tp without and with sequence parallelism, and its distributed optimizer.
TEST(ValidationMatrix, CoversTensorParallelismSequenceParallelismAndTheDistributedOptimizer) {
  const auto runs = validation_matrix(MatrixOptions{2, false});
  auto has = [&](auto predicate) { return std::any_of(runs.begin(), runs.end(), predicate); };
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.y == 2 && r.layout.vocabulary_parallel() && !r.layout.sequence_parallel; }));
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.y == 2 && r.layout.sequence_parallel && r.schedule.overlap_all_reduce; }));
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.y == 2 && r.layout.sequence_parallel && !r.schedule.overlap_all_reduce; }));
  EXPECT_TRUE(has([](const ValidationRun& r) { return r.layout.zero_stage == 1 && r.layout.data == 2; }));
}

TEST(ValidationMatrix, FourRanksOnlyWhenAllowed) {
  const auto two = validation_matrix(MatrixOptions{2, false});
  const auto four = validation_matrix(MatrixOptions{4, false});
  const auto one = validation_matrix(MatrixOptions{1, false});
  EXPECT_GT(four.size(), two.size());
  EXPECT_TRUE(std::any_of(four.begin(), four.end(), [](const auto& r) { return r.ranks() == 4; }));
  for (const auto& r : one) EXPECT_EQ(r.ranks(), 1);
  // A bigger host adds runs; the runs of a smaller one keep their ids.
  const auto sixteen = validation_matrix(MatrixOptions{16, false});
  const auto eight = validation_matrix(MatrixOptions{8, false});
  EXPECT_GT(eight.size(), four.size());
  EXPECT_GT(sixteen.size(), eight.size());
  for (std::size_t i = 0; i < four.size(); ++i) {
    EXPECT_EQ(sixteen[i].id, four[i].id);
    EXPECT_EQ(to_string(sixteen[i].layout), to_string(four[i].layout));
  }
  int max_ranks = 0;
  for (const auto& r : sixteen) max_ranks = std::max(max_ranks, r.ranks());
  EXPECT_EQ(max_ranks, 16);
  for (const auto& r : eight) EXPECT_LE(r.ranks(), 8);
}

TEST(ValidationMatrix, RunIdsAreUnique) {
  const auto runs = validation_matrix(MatrixOptions{16, false});
  std::set<std::string> ids;
  for (const auto& r : runs) ids.insert(r.id);
  EXPECT_EQ(ids.size(), runs.size());
}

TEST(ValidationMatrix, EveryRunIsAValidEngineConfiguration) {
  for (const bool quick : {false, true}) {
    for (const auto& r : validation_matrix(MatrixOptions{16, quick})) {
      RunConfig config;
      config.model = r.model;
      config.layout = r.layout;
      config.batch_sequences = r.sequences;
      EXPECT_NO_THROW(validate_run(config, r.ranks())) << r.id << " " << describe(r);
      EXPECT_LT(r.warmup, r.steps);
    }
  }
}

TEST(ValidationMatrix, QuickIsTiny) {
  const auto runs = validation_matrix(MatrixOptions{2, true});
  EXPECT_GE(runs.size(), 1u);
  EXPECT_LE(runs.size(), 2u);
}

TEST(EngineArguments, OverlapOffAndRecomputeBecomeFlags) {
  ValidationRun run = validation_matrix(MatrixOptions{2, false}).front();
  run.schedule.recompute = true;
  run.schedule.overlap_all_reduce = run.schedule.overlap_all_gather = run.schedule.overlap_data_parallel = false;
  const auto args = engine_arguments(run);
  const auto has = [&](const char* flag) { return std::find(args.begin(), args.end(), flag) != args.end(); };
  EXPECT_TRUE(has("--recompute"));
  EXPECT_TRUE(has("--no-oar"));
  EXPECT_FALSE(has("--no-ors"));
  EXPECT_TRUE(has("--no-oag"));
  EXPECT_TRUE(has("--no-overlap-dp"));
  const auto layout = std::find(args.begin(), args.end(), "--layout");
  ASSERT_NE(layout, args.end());
  EXPECT_EQ(*(layout + 1), to_string(run.layout));
}

}  // namespace
}  // namespace ws
