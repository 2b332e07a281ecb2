#include "engine/schedule/flops.hpp"

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
