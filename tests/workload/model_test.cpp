#include "workload/model.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

TEST(Model, FamilyNamesMatchParameterCounts) {
  // Each named size is within 15% of its parameter count (names are rounded marketing sizes).
  for (const auto& m : gpt_family()) {
    const double billions = std::stod(m.name) * 1e9;
    EXPECT_NEAR(parameter_count(m) / billions, 1.0, 0.15) << m.name;
  }
}

TEST(Model, LookupByName) {
  EXPECT_EQ(find_model("20B")->hidden, 7168);
  EXPECT_FALSE(find_model("7B"));
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// Parameter counts of the released checkpoints (the safetensors totals of
// huggingface.co/meta-llama/Llama-2-7b-hf and Meta-Llama-3-8B): the presets' dimensions must give
// them to the parameter.
TEST(Model, LlamaPresetsHaveTheReleasedParameterCounts) {
  EXPECT_EQ(parameter_count(*find_model("llama2-7b")), 6738415616.0);
  EXPECT_EQ(parameter_count(*find_model("llama3-8b")), 8030261248.0);
  // The larger ones near their published sizes (Llama-2 70B is 69.0 B; Llama-3: 70.6 B, 405.9 B).
  EXPECT_NEAR(parameter_count(*find_model("llama2-70b")) / 70e9, 1.0, 0.02);
  EXPECT_NEAR(parameter_count(*find_model("llama3-70b")) / 70.6e9, 1.0, 0.005);
  EXPECT_NEAR(parameter_count(*find_model("llama3-405b")) / 405.9e9, 1.0, 0.005);
}

TEST(Model, LlamaPresetsAreLlamaShaped) {
  for (const ModelSpec& m : llama_family()) {
    EXPECT_FALSE(m.gpt_style()) << m.name;
    EXPECT_EQ(m.activation, Activation::swiglu) << m.name;
    EXPECT_EQ(m.heads % m.kv_head_count(), 0) << m.name;
    EXPECT_FALSE(m.tied_embeddings) << m.name;
  }
  for (const ModelSpec& m : gpt_family()) EXPECT_TRUE(m.gpt_style()) << m.name;
}

// A small Llama counted by hand: l = 3, h = 64, 8 heads of 8, 2 K/V heads, ffn 96, V = 128.
// Per block QKV 64 x (64 + 2*2*8) = 6,144, projection 4,096, SwiGLU up 64 x 192 = 12,288, down
// 96 x 64 = 6,144 (28,672 weights) and two RMSNorm gammas (128); untied embedding and LM head
// 2 x 128 x 64; the final gamma 64: 3 x 28,800 + 16,384 + 64.
TEST(Model, SmallLlamaParametersByHand) {
  ModelSpec m{"small-llama", 3, 64, 8, 16, 128, 1};
  m.kv_heads = 2, m.ffn_hidden = 96, m.activation = Activation::swiglu, m.norm = NormKind::rmsnorm;
  m.position = Position::rope, m.tied_embeddings = false, m.biases = false;
  EXPECT_EQ(block_weight_count(m), 28672.0);
  EXPECT_EQ(parameter_count(m), 102848.0);
  EXPECT_EQ(m.qkv_features(), 96);
  EXPECT_EQ(m.up_features(), 192);
}

TEST(Model, ChoicesParseTheirPrintedNames) {
  for (Activation a : {Activation::gelu, Activation::swiglu}) EXPECT_EQ(parse_activation(to_string(a)), a);
  for (NormKind n : {NormKind::layernorm, NormKind::rmsnorm}) EXPECT_EQ(parse_norm(to_string(n)), n);
  for (Position p : {Position::learned, Position::rope}) EXPECT_EQ(parse_position(to_string(p)), p);
  EXPECT_FALSE(parse_activation("relu"));
}

}  // namespace
}  // namespace ws
