#include "workload/flops.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

TEST(Flops, HardwareFormulaByHand) {
  // l=2, h=64, S=32, V=128, B=4: 96*4*32*2*64^2 * (1 + 32/384 + 128/(16*2*64)).
  ModelSpec m{"tiny", 2, 64, 4, 32, 128, 1};
  Batch b{4};
  const double base = 96.0 * 4 * 32 * 2 * 64 * 64;
  EXPECT_DOUBLE_EQ(hardware_flops_per_step(m, b), base * (1.0 + 32.0 / 384.0 + 128.0 / 2048.0));
}

TEST(Flops, ModelFlopsAreThreeQuartersOfHardwareWithoutTheVocabTerm) {
  // With V = 0 the two counts differ only by the recomputed forward: 72 / 96.
  ModelSpec m{"novocab", 4, 1024, 16, 512, 0, 1};
  Batch b{8};
  EXPECT_DOUBLE_EQ(model_flops_per_step(m, b) / hardware_flops_per_step(m, b), 0.75);
}

TEST(Flops, LinearInBatch) {
  const ModelSpec m = *find_model("20B");
  EXPECT_DOUBLE_EQ(hardware_flops_per_step(m, Batch{64}), 2.0 * hardware_flops_per_step(m, Batch{32}));
}

TEST(Flops, ExecutedFollowsRecompute) {
  const ModelSpec m = *find_model("5B");
  EXPECT_EQ(executed_flops_per_step(m, Batch{8}, true), hardware_flops_per_step(m, Batch{8}));
  EXPECT_EQ(executed_flops_per_step(m, Batch{8}, false), model_flops_per_step(m, Batch{8}));
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// The small Llama of model_test.cpp, B = 4: per token and layer the forward pass runs 2 x 28,672
// FC flops and 4 S h = 4,096 attention flops (61,440; x 3 layers = 184,320) and the LM head
// 2 V h = 16,384. Model: 64 tokens x 3 x (184,320 + 16,384); hardware: 64 x (4 x 184,320 + 3 x 16,384).
TEST(Flops, SmallLlamaByHand) {
  ModelSpec m{"small-llama", 3, 64, 8, 16, 128, 1};
  m.kv_heads = 2, m.ffn_hidden = 96, m.activation = Activation::swiglu, m.norm = NormKind::rmsnorm;
  m.position = Position::rope, m.tied_embeddings = false, m.biases = false;
  EXPECT_EQ(model_flops_per_step(m, Batch{4}), 38535168.0);
  EXPECT_EQ(hardware_flops_per_step(m, Batch{4}), 50331648.0);
}

// The general count is the GPT formula for every member of the GPT family.
TEST(Flops, GeneralCountIsTheGptFormulaForTheGptFamily) {
  for (const ModelSpec& m : gpt_family()) {
    const double B = 64, S = m.sequence_length, l = m.layers, h = m.hidden, V = m.vocabulary;
    EXPECT_DOUBLE_EQ(model_flops_per_step(m, Batch{64}),
                     72 * B * S * l * h * h * (1 + S / (6 * h) + V / (12 * l * h)));
    EXPECT_DOUBLE_EQ(hardware_flops_per_step(m, Batch{64}),
                     96 * B * S * l * h * h * (1 + S / (6 * h) + V / (16 * l * h)));
  }
}

}  // namespace
}  // namespace ws
