// Token sources and batch sharding: every layout's shards tile the global batch exactly once, and
// a sequence depends only on (seed, step, index).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "engine/train/run_config.hpp"
#include "engine/train/token_source.hpp"

namespace ws {
namespace {

TEST(BatchShard, ShardsTileTheGlobalBatchOverDataAndZ) {
  for (const Layout layout : {Layout{1, 1, 1, 1}, Layout{2, 1, 1, 1}, Layout{2, 2, 1, 2}, Layout{1, 2, 2, 2},
                              Layout{4, 1, 2, 1}}) {
    const long long global = 8;
    std::vector<int> seen(global, 0);
    for (int rank = 0; rank < layout.devices(); ++rank) {
      const RankCoords c = coords_of(layout, rank);
      const BatchShard s = batch_shard(layout, c, global);
      EXPECT_EQ(s.count, global / (layout.data * layout.z));
      // Ranks that differ only in X or Y see the same shard; count each (d, z) once.
      if (c.x == 0 && c.y == 0)
        for (long long i = s.first; i < s.first + s.count; ++i) ++seen[i];
    }
    for (int n : seen) EXPECT_EQ(n, 1) << to_string(layout);
  }
}

TEST(SyntheticTokens, SequenceDependsOnlyOnSeedStepAndIndex) {
  const SyntheticTokens a(9, 50), b(9, 50), c(10, 50);
  std::vector<int> in_a(16), tg_a(16), in_b(16), tg_b(16), in_c(16), tg_c(16);
  a.sequence(3, 5, 16, in_a.data(), tg_a.data());
  b.sequence(3, 5, 16, in_b.data(), tg_b.data());
  c.sequence(3, 5, 16, in_c.data(), tg_c.data());
  EXPECT_EQ(in_a, in_b);
  EXPECT_EQ(tg_a, tg_b);
  EXPECT_NE(in_a, in_c);
  for (int i = 0; i < 16; ++i) {
    EXPECT_TRUE(in_a[i] >= 0 && in_a[i] < 50);
    if (i + 1 < 16) {
      EXPECT_EQ(tg_a[i], in_a[i + 1]);  // targets are the next tokens
    }
  }
}

TEST(TextFileTokens, MissingOrShortFileIsAConfigError) {
  EXPECT_THROW(TextFileTokens("/nonexistent/weakscale.txt", 1, 8), InputError);
}

RunConfig valid_run() {
  RunConfig run;
  run.model = ModelSpec{"t", 2, 16, 2, 8, 32, 1};
  run.layout = Layout{2, 1, 1, 1};
  run.batch_sequences = 4;
  return run;
}

TEST(ValidateRun, AcceptsMatchingLayouts) {
  RunConfig run = valid_run();
  EXPECT_NO_THROW(validate_run(run, 2));
  run.layout = Layout{1, 2, 1, 1};
  EXPECT_NO_THROW(validate_run(run, 2));
  run.layout = Layout{1, 2, 2, 1};
  EXPECT_NO_THROW(validate_run(run, 4));
  run.layout = Layout{1, 1, 2, 2};
  EXPECT_NO_THROW(validate_run(run, 4));
}

TEST(ValidateRun, RejectsWrongRankCountIndivisibleBatchAndModel) {
  RunConfig run = valid_run();
  EXPECT_THROW(validate_run(run, 3), InputError);
  run.batch_sequences = 3;
  EXPECT_THROW(validate_run(run, 2), InputError);
  run = valid_run();
  run.model.heads = 3;
  EXPECT_THROW(validate_run(run, 2), InputError);
  run = valid_run();
  run.layout = Layout{1, 1, 4, 1};  // 2 heads cannot split over 4 Y ranks
  EXPECT_THROW(validate_run(run, 4), InputError);
  run.layout = Layout{1, 4, 4, 3};  // 16/4 x 16/4 blocks do not cut into 3 Z shards
  try {
    validate_run(run, 48);
    FAIL() << "indivisible Z sharding accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Gz = 3 shards"), std::string::npos) << e.what();
  }
}

// The engine runs the 4D step: pipelined layouts and a vocabulary split over tp are the simulator's.
TEST(ValidateRun, AcceptsPipelinesAndVocabularyParallelHeads) {
  RunConfig run = valid_run();
  for (const char* text : {"2x1x1x1/pp=1,mb=2", "1x1x1x1/pp=2,mb=2", "1x1x1x1/pp=2,mb=1", "tp=1,pp=2,dp=1,mb=4",
                           "tp=2,dp=1", "dp_shard=1,tp=2", "tp=1,dp=2,zero=1", "tp=2,dp=1,sp"}) {
    run.layout = *parse_layout(text);
    EXPECT_NO_THROW(validate_run(run, 2)) << text;
  }
  run.layout = *parse_layout("tp=2,pp=2,dp=1,mb=2");  // stages with a vocabulary-parallel head
  EXPECT_NO_THROW(validate_run(run, 4));
  run.layout = *parse_layout("tp=2,pp=2,dp=1,mb=2,sp");  // and sequence parallelism
  EXPECT_NO_THROW(validate_run(run, 4));
  run.model.layers = 4;
  run.layout = *parse_layout("1x1x1x1/pp=2,vpp=2,mb=2");
  EXPECT_NO_THROW(validate_run(run, 2));
}

// Each refusal names the layout and the rule it breaks (pipeline_problem's words, or the parts
// of a layout the engine leaves to the simulator).
TEST(ValidateRun, RefusesPipelinesItCannotRunNamingTheRule) {
  RunConfig run = valid_run();
  const std::pair<const char*, const char*> cases[] = {
      {"1x1x1x1/pp=2,vpp=2,mb=2", "fewer than pp*vpp=4"},             // 2 layers, 4 chunks
      {"1x1x1x1/pp=2,mb=3", "not divisible by Gdata*Gz*mb=3"},        // batch 4
      {"1x1x1x2/pp=1,mb=2", "Gz=2 (weights sharded over Z)"},
  };
  for (const auto& [text, rule] : cases) {
    run.layout = *parse_layout(text);
    const int ranks = run.layout.devices();
    try {
      validate_run(run, ranks);
      FAIL() << text << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(to_string(run.layout)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
    }
  }
  // Sequence parallelism splits each sequence over tp.
  run.model.sequence_length = 9;
  run.layout = *parse_layout("tp=2,dp=1,sp");
  try {
    validate_run(run, 2);
    FAIL() << "tp=2,dp=1,sp with seq 9 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("seq 9 not divisible by tp=2"), std::string::npos) << e.what();
  }
  run.model.sequence_length = valid_run().model.sequence_length;
  run.model.vocabulary = 33;  // split over tp = 2
  for (const char* text : {"tp=2,dp=1", "tp=2,pp=2,dp=1,mb=2", "dp_shard=1,tp=2"}) {
    run.layout = *parse_layout(text);
    try {
      validate_run(run, run.layout.devices());
      FAIL() << text << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--vocab 33 is not divisible by Gy = tp = 2"), std::string::npos)
          << e.what();
    }
  }
  run = valid_run();
  run.model.layers = 4;
  run.layout = *parse_layout("1x1x1x1/pp=2,vpp=2,mb=3");
  EXPECT_THROW(validate_run(run, 2), InputError);  // interleaving needs mb in groups of pp
}

}  // namespace
}  // namespace ws
