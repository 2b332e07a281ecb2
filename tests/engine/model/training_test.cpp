// Serial training properties: AdamW lowers the loss on a learnable stream; runs are reproducible;
// clipping bounds the update.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "engine/train/trainer.hpp"

namespace ws {
namespace {

RunConfig tiny_run() {
  RunConfig run;
  run.model.name = "tiny";
  run.model.layers = 2;
  run.model.hidden = 16;
  run.model.heads = 2;
  run.model.sequence_length = 8;
  run.model.vocabulary = 32;
  run.layout = Layout{1, 1, 1, 1};
  run.batch_sequences = 4;
  run.seed = 1;
  run.optimizer.learning_rate = 1e-2;
  return run;
}

double mean_loss(Trainer<float>& trainer, int steps, int average_last) {
  double sum = 0;
  for (int s = 0; s < steps; ++s) {
    const double loss = trainer.step().loss;
    EXPECT_TRUE(std::isfinite(loss));
    if (s >= steps - average_last) sum += loss;
  }
  return sum / average_last;
}

TEST(Training, AdamWLowersLossOnSyntheticStream) {
  const RunConfig run = tiny_run();
  const ProcessGrid grid = ProcessGrid::serial();
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  Trainer<float> trainer(run, grid, source);
  const double first = trainer.step().loss;
  EXPECT_NEAR(first, std::log(32.0), 0.5);  // untrained: about uniform
  const double late = mean_loss(trainer, 60, 5);
  EXPECT_LT(late, first - 1.0) << "first " << first << " late " << late;
}

TEST(Training, SameSeedSameLosses) {
  const RunConfig run = tiny_run();
  const ProcessGrid grid = ProcessGrid::serial();
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  RunConfig untuned = run;
  untuned.tune_gemm = false;  // the tuner may pick other variants; results must still agree
  Trainer<float> a(run, grid, source), b(untuned, grid, source);
  for (int s = 0; s < 3; ++s) {
    const double la = a.step().loss, lb = b.step().loss;
    EXPECT_NEAR(la, lb, 1e-6 * std::fabs(la));
  }
}

TEST(Training, TextFileLowersLoss) {
  const std::string path = ::testing::TempDir() + "weakscale_engine_text.txt";
  {
    std::ofstream out(path);
    for (int i = 0; i < 200; ++i) out << "the quick brown fox jumps over the lazy dog. ";
  }
  RunConfig run = tiny_run();
  run.model.vocabulary = 256;
  const ProcessGrid grid = ProcessGrid::serial();
  const TextFileTokens source(path, run.seed, run.model.sequence_length);
  Trainer<float> trainer(run, grid, source);
  const double first = trainer.step().loss;
  const double late = mean_loss(trainer, 60, 5);
  EXPECT_LT(late, first - 1.0) << "first " << first << " late " << late;
  std::remove(path.c_str());
}

// The Llama family learns the same text: rotary positions, RMSNorm, SwiGLU and grouped-query
// attention train as the GPT's kernels do.
TEST(Training, LlamaLowersLossOnTheTextFileAsTheGptDoes) {
  const std::string path = ::testing::TempDir() + "weakscale_engine_llama_text.txt";
  {
    std::ofstream out(path);
    for (int i = 0; i < 200; ++i) out << "the quick brown fox jumps over the lazy dog. ";
  }
  RunConfig run = tiny_run();
  run.model.heads = 4, run.model.kv_heads = 2, run.model.ffn_hidden = 32;
  run.model = with_llama_architecture(run.model);
  run.model.vocabulary = 256;
  const ProcessGrid grid = ProcessGrid::serial();
  const TextFileTokens source(path, run.seed, run.model.sequence_length);
  Trainer<float> trainer(run, grid, source);
  const double first = trainer.step().loss;
  EXPECT_NEAR(first, std::log(256.0), 0.5);  // untrained: about uniform
  const double late = mean_loss(trainer, 60, 5);
  EXPECT_LT(late, first - 1.0) << "first " << first << " late " << late;
  std::remove(path.c_str());
}

TEST(Training, ClippingReportsNormBeforeClip) {
  RunConfig run = tiny_run();
  run.optimizer.clip_norm = 1e-6;  // clip everything: parameters move by lr-sized Adam steps only
  const ProcessGrid grid = ProcessGrid::serial();
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  Trainer<float> trainer(run, grid, source);
  const StepResult r = trainer.step();
  EXPECT_GT(r.grad_norm, run.optimizer.clip_norm);
  EXPECT_DOUBLE_EQ(clip_factor(2.0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(clip_factor(0.5, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(clip_factor(5.0, 0.0), 1.0);
}

}  // namespace
}  // namespace ws
