// The tiny models the engine's equality tests train: the GPT one, and a Llama one with every
// Llama choice (grouped-query attention with 2 K/V heads for 4 query heads, SwiGLU of 24, RMSNorm,
// rotary positions, untied LM head, no biases).
#pragma once

#include "workload/model.hpp"

namespace ws {

inline ModelSpec tiny_gpt() { return ModelSpec{"tiny", 2, 16, 4, 8, 32, 1}; }

inline ModelSpec tiny_llama() {
  ModelSpec m{"tiny-llama", 2, 16, 4, 8, 32, 1};
  m.kv_heads = 2, m.ffn_hidden = 24;
  return with_llama_architecture(m);
}

}  // namespace ws
