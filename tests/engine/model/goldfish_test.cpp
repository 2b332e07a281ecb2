// The Goldfish mask, the masked cross-entropy and its exact gradient, greedy decoding and the
// text-chunk source a memorization study trains on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "engine/kernels/cross_entropy.hpp"
#include "engine/model/gpt.hpp"
#include "base/random.hpp"
#include "engine/train/goldfish.hpp"
#include "engine/train/memorization.hpp"
#include "engine/train/run_config.hpp"
#include "engine/train/token_source.hpp"
#include "tests/engine/model/central_differences.hpp"

namespace ws {
namespace {

std::vector<int> random_tokens(std::size_t count, int vocabulary, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<int> tokens(count);
  for (int& t : tokens) t = static_cast<int>(rng.below(static_cast<std::uint64_t>(vocabulary)));
  return tokens;
}

// Hidden 16, 2 heads.
ModelSpec tiny_model(int layers, int seq, int vocabulary) {
  ModelSpec spec;
  spec.name = "tiny";
  spec.layers = layers, spec.hidden = 16, spec.heads = 2, spec.sequence_length = seq, spec.vocabulary = vocabulary;
  return spec;
}

TEST(GoldfishMask, OffChangesNothing) {
  const std::vector<int> inputs = random_tokens(64, 50, 1);
  std::vector<int> targets = random_tokens(64, 50, 2);
  const std::vector<int> before = targets;
  EXPECT_EQ(apply_goldfish_mask(GoldfishOptions{0, 13}, inputs.data(), targets.data(), 4, 16), 64);
  EXPECT_EQ(targets, before);
}

// Over many random contexts the dropped share is 1/k (binomial: 5 standard deviations). With
// h >= 3 of 256 token values nearly every context is new, so the verdicts are independent draws
// (h = 1 would have only 256 contexts: the share of 256 values, a much wider spread).
TEST(GoldfishMask, DropsOneInKTargets) {
  const int sequences = 400, seq = 256;
  const std::vector<int> inputs = random_tokens(static_cast<std::size_t>(sequences) * seq, 256, 3);
  for (int k : {2, 4, 7}) {
    for (int h : {3, 13}) {
      std::vector<int> targets(inputs.size(), 0);
      const long long kept = apply_goldfish_mask(GoldfishOptions{k, h}, inputs.data(), targets.data(), sequences, seq);
      const double eligible = static_cast<double>(sequences) * (seq - h + 1);
      const double dropped = static_cast<double>(static_cast<long long>(inputs.size()) - kept);
      const double sigma = std::sqrt(eligible * (1.0 / k) * (1 - 1.0 / k));
      EXPECT_NEAR(dropped, eligible / k, 5 * sigma) << "k " << k << " h " << h;
      EXPECT_EQ(std::count(targets.begin(), targets.end(), kIgnoredTarget), static_cast<long long>(inputs.size()) - kept);
    }
  }
}

// The verdict on a target depends on the h tokens before it and nothing else: not the position,
// the sequence, the tokens further back, or the target itself. And the first h - 1 targets of a
// sequence, with fewer than h tokens before them, are always kept.
TEST(GoldfishMask, DependsOnlyOnTheHTokensBeforeTheTarget) {
  const int seq = 32, h = 5, k = 3;
  const std::vector<int> a = random_tokens(seq, 40, 4);
  // b: a's tokens shifted right by 7 behind unrelated ones, so every h-gram of a reappears later.
  std::vector<int> b = random_tokens(seq + 7, 40, 5);
  std::copy(a.begin(), a.end(), b.begin() + 7);
  std::vector<int> ta(seq, 1), tb(seq + 7, 2);
  apply_goldfish_mask(GoldfishOptions{k, h}, a.data(), ta.data(), 1, seq);
  apply_goldfish_mask(GoldfishOptions{k, h}, b.data(), tb.data(), 1, seq + 7);
  int dropped = 0;
  for (int i = 0; i < seq; ++i) {
    if (i < h - 1) {
      EXPECT_NE(ta[i], kIgnoredTarget) << i;
    } else {
      EXPECT_EQ(ta[i] == kIgnoredTarget, tb[i + 7] == kIgnoredTarget) << i;
      EXPECT_EQ(ta[i] == kIgnoredTarget, goldfish_drops(a.data() + i - h + 1, h, k)) << i;
    }
    dropped += ta[i] == kIgnoredTarget ? 1 : 0;
  }
  EXPECT_GT(dropped, 0);  // the comparison is not vacuous
}

TEST(MaskedCrossEntropy, IgnoredRowsAddNoLossAndGetNoGradient) {
  const int rows = 6, vocabulary = 5;
  SplitMix64 rng(6);
  std::vector<double> logits(rows * vocabulary);
  for (double& l : logits) l = rng.normal();
  const std::vector<int> targets{0, 3, 4, 1, 2, 2};
  std::vector<int> masked = targets;
  masked[1] = masked[4] = kIgnoredTarget;
  // Per-row losses from the unmasked call, one row at a time.
  double kept_sum = 0;
  for (int r = 0; r < rows; ++r) {
    std::vector<double> row(logits.begin() + r * vocabulary, logits.begin() + (r + 1) * vocabulary);
    const double loss = cross_entropy_forward(row.data(), &targets[r], 1, vocabulary);
    if (masked[r] != kIgnoredTarget) kept_sum += loss;
  }
  std::vector<double> probs = logits;
  EXPECT_NEAR(cross_entropy_forward(probs.data(), masked.data(), rows, vocabulary), kept_sum, 1e-12);
  cross_entropy_backward(probs.data(), masked.data(), rows, vocabulary, 0.5);
  for (int r = 0; r < rows; ++r) {
    double row_sum = 0, row_abs = 0;
    for (int i = 0; i < vocabulary; ++i) row_sum += probs[r * vocabulary + i], row_abs += std::fabs(probs[r * vocabulary + i]);
    EXPECT_NEAR(row_sum, 0, 1e-12);  // softmax gradients sum to zero per row
    if (masked[r] == kIgnoredTarget) {
      EXPECT_EQ(row_abs, 0) << r;
    } else {
      EXPECT_GT(row_abs, 0) << r;
    }
  }
}

// The gradient of the masked mean loss (1 / supervised targets) against central finite
// differences of the forward pass, for every parameter of a tiny model, with a mask that drops
// about half of the targets.
TEST(GoldfishGradient, MatchesCentralFiniteDifferencesWithTheMaskOn) {
  const ModelSpec spec = tiny_model(2, 8, 32);
  const ProcessGrid grid = ProcessGrid::serial();
  GemmTuner<double> tuner;
  Gpt<double> model(spec, grid, tuner, 7);
  const int sequences = 2;
  TokenBatch batch = load_batch(SyntheticTokens(3, spec.vocabulary), 0, BatchShard{0, sequences}, spec.sequence_length);
  const long long kept = apply_goldfish_mask(GoldfishOptions{2, 2}, batch.inputs.data(), batch.targets.data(),
                                             sequences, spec.sequence_length);
  ASSERT_LT(kept, sequences * spec.sequence_length - 2);  // the mask really drops targets
  ASSERT_GT(kept, 2);
  const double supervised = static_cast<double>(kept);
  auto loss = [&] { return model.forward(batch.inputs.data(), batch.targets.data(), sequences) / supervised; };

  auto& store = model.parameters();
  store.zero_grads();
  loss();
  model.backward(1.0 / supervised);
  const std::vector<double> analytic = store.grads();
  const GradientCheck check = compare_with_central_differences(store, analytic, loss);
  EXPECT_LT(check.worst, 1e-6) << check.worst_at;
  EXPECT_EQ(check.checked, store.size());
  EXPECT_GT(check.analytic_norm, 1e-2);
}

TEST(GreedyToken, PicksTheLargestAndTheLowestIdAmongEquals) {
  const std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f, 1.9f};
  EXPECT_EQ(greedy_token(logits.data(), 5), 1);
  EXPECT_EQ(greedy_token(logits.data() + 2, 3), 1);  // 2.0 at index 3 of the whole row
}

// A model that saw no training predicts almost nothing of a text (vocabulary 256: chance 1/256),
// and asking for a continuation longer than the window is rejected up front by the engine; here
// the evaluation's bookkeeping: N sequences, L positions, rates in [0, 1], loss near log V.
TEST(Memorization, UntrainedModelScoresNearChance) {
  const ModelSpec spec = tiny_model(1, 16, 64);
  const ProcessGrid grid = ProcessGrid::serial();
  GemmTuner<double> tuner;
  Gpt<double> model(spec, grid, tuner, 9);
  const MemorizationResult r =
      evaluate_memorization(model, grid, SyntheticTokens(2, spec.vocabulary), MemorizationOptions{8, 6, 10});
  EXPECT_EQ(r.sequences, 8);
  EXPECT_EQ(r.length, 10);
  EXPECT_EQ(r.exact_matches, 0);
  EXPECT_LE(r.correct_tokens, 8 * 10);
  EXPECT_LT(r.token_accuracy(), 0.3);
  EXPECT_NEAR(r.loss, std::log(64.0), 0.5);
}

std::string write_text(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// chunks: the file cut into documents of seq + 1 bytes, global sequence step * batch + index
// reads document (step * batch + index) mod documents; the partial tail is never read.
TEST(TextFileTokens, ChunksAreConsecutiveDocumentsReadInOrder) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += static_cast<char>('A' + i % 26);
  const std::string path = write_text("weakscale_chunks.txt", text);
  const int seq = 7;  // 8-byte documents: 6 of them, 2 bytes left over
  const TextFileTokens source(path, 1, seq, TextOrder::chunks, 4);
  EXPECT_EQ(source.chunks(), 6);
  std::vector<int> in(seq), tg(seq);
  for (long long step : {0LL, 1LL, 5LL})
    for (long long index = 0; index < 4; ++index) {
      source.sequence(step, index, seq, in.data(), tg.data());
      const long long doc = (step * 4 + index) % 6;
      for (int i = 0; i < seq; ++i) {
        EXPECT_EQ(in[i], static_cast<unsigned char>(text[doc * 8 + i]));
        EXPECT_EQ(tg[i], static_cast<unsigned char>(text[doc * 8 + i + 1]));
      }
    }
  std::remove(path.c_str());
}

TEST(ValidateRun, RejectsGoldfishSettingsThatCannotWork) {
  RunConfig run;
  run.model = ModelSpec{"t", 2, 16, 2, 8, 32, 1};
  run.layout = Layout{1, 1, 1, 1};
  run.batch_sequences = 4;
  run.goldfish = GoldfishOptions{4, 7};
  EXPECT_NO_THROW(validate_run(run, 1));
  for (const auto& [options, message] :
       {std::pair{GoldfishOptions{1, 3}, "--goldfish-k 1 must be 0 (off) or at least 2"},
        std::pair{GoldfishOptions{-2, 3}, "--goldfish-k -2 must be 0"},
        std::pair{GoldfishOptions{4, 8}, "--goldfish-context 8 must be between 1 and --seq - 1 = 7"},
        std::pair{GoldfishOptions{4, 0}, "--goldfish-context 0 must be between 1"}}) {
    run.goldfish = options;
    try {
      validate_run(run, 1);
      ADD_FAILURE() << message;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ws
