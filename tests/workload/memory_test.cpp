#include "workload/memory.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ws {
namespace {

// l=2, h=64, heads=4, S=32, V=128: every shard below is an exact binary fraction.
const ModelSpec kTiny{"tiny", 2, 64, 4, 32, 128, 1};

// Closed forms of memory.cpp: FC weights, tied embedding/LM head and position table sharded over
// Gx*Gy*Gz; biases and layer norms split only by the group that splits their features.
double sharded_params(const Layout& l) {
  const double h = 64, L = 2, S = 32, V = 128;
  return (12 * L * h * h + V * h + S * h) / (l.x * l.y * l.z);
}
// The estimate holds whole bytes, rounded up.
Bytes whole(double bytes) { return static_cast<Bytes>(std::ceil(bytes)); }
double small_params(const Layout& l) {
  const double h = 64, L = 2;
  return L * (7 * h / l.y + 6 * h / l.x) + 2 * h / l.x;  // 13 h per block, as parameter_count
}

TEST(Memory, WeightsAreTwoBytesPerShardedParameter) {
  for (const Layout& l : {Layout{1, 1, 1, 1}, Layout{2, 2, 2, 2}, Layout{1, 4, 2, 8}}) {
    const MemoryEstimate m = estimate_memory(kTiny, Batch{32}, l, 2, true);
    const double params = sharded_params(l) + small_params(l);
    EXPECT_EQ(m.weights_bytes, whole(2 * params)) << to_string(l);
    EXPECT_EQ(m.gradients_bytes, whole(2 * params));
    EXPECT_EQ(m.optimizer_bytes, whole(12 * params));
  }
}

TEST(Memory, UnshardedParametersMatchTheModelCount) {
  // On one device nothing is sharded: every parameter of parameter_count() is stored once.
  const MemoryEstimate m = estimate_memory(kTiny, Batch{32}, Layout{1, 1, 1, 1}, 2, true);
  EXPECT_EQ(m.weights_bytes, whole(2 * parameter_count(kTiny)));
}

TEST(Memory, Fp32TrainingKeepsFourFourEight) {
  const Layout l{1, 2, 2, 2};
  const MemoryEstimate m = estimate_memory(kTiny, Batch{32}, l, 4, true);
  const double params = sharded_params(l) + small_params(l);
  EXPECT_EQ(m.weights_bytes, whole(4 * params));
  EXPECT_EQ(m.gradients_bytes, whole(4 * params));
  EXPECT_EQ(m.optimizer_bytes, whole(8 * params));
}

TEST(Memory, RecomputeLowersActivations) {
  for (const Layout& l : {Layout{1, 1, 1, 1}, Layout{2, 2, 2, 2}}) {
    const Bytes with = estimate_memory(kTiny, Batch{32}, l, 2, true).activations_bytes;
    const Bytes without = estimate_memory(kTiny, Batch{32}, l, 2, false).activations_bytes;
    EXPECT_LT(with, without);
    EXPECT_GT(with, 0u);
  }
}

TEST(Memory, DoublingGzHalvesShardedOptimizerState) {
  const Layout z1{1, 2, 2, 1}, z2{1, 2, 2, 2};
  const Bytes o1 = estimate_memory(kTiny, Batch{32}, z1, 2, true).optimizer_bytes;
  const Bytes o2 = estimate_memory(kTiny, Batch{32}, z2, 2, true).optimizer_bytes;
  // Small parameters are replicated over Z, so only the FC part halves.
  EXPECT_EQ(o1, whole(12 * (sharded_params(z1) + small_params(z1))));
  EXPECT_EQ(o2, whole(12 * (sharded_params(z1) / 2 + small_params(z2))));
  EXPECT_DOUBLE_EQ(12 * sharded_params(z2), 12 * sharded_params(z1) / 2);
}

TEST(Memory, MoreDataParallelismShrinksActivationsNotWeights) {
  const MemoryEstimate a = estimate_memory(kTiny, Batch{32}, Layout{1, 2, 2, 1}, 2, false);
  const MemoryEstimate b = estimate_memory(kTiny, Batch{32}, Layout{2, 2, 2, 1}, 2, false);
  EXPECT_EQ(b.weights_bytes, a.weights_bytes);
  EXPECT_EQ(b.activations_bytes, (a.activations_bytes + 1) / 2);  // whole bytes, rounded up
  EXPECT_GT(a.total_bytes(), b.total_bytes());
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// On one rank every parameter is held once, so the weights are the parameter count for both
// families (the Llama model: GQA, SwiGLU, RMSNorm, rotary, untied, no biases).
TEST(Memory, OneRankHoldsEveryParameterOnceInEitherFamily) {
  ModelSpec llama{"small-llama", 3, 64, 8, 16, 128, 1};
  llama.kv_heads = 2, llama.ffn_hidden = 96, llama.activation = Activation::swiglu;
  llama.norm = NormKind::rmsnorm, llama.position = Position::rope, llama.tied_embeddings = false;
  llama.biases = false;
  for (const ModelSpec& m : {kTiny, llama}) {
    const MemoryEstimate mem = estimate_memory(m, Batch{4}, Layout{}, 4, false);
    EXPECT_EQ(mem.weights_bytes, whole(4 * parameter_count(m))) << m.name;
  }
}

}  // namespace
}  // namespace ws
