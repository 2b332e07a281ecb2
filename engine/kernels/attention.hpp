// Causal multi-head self-attention on a fused QKV matrix, one (sequence, head) at a time.
// qkv rows are tokens ([sequences*seq x 3*width]); columns are [Q | K | V], each `width` wide with
// head h in columns h*head_dim .. (h+1)*head_dim. `width` = heads * head_dim is the local width:
// when heads are split over Y a rank passes only its own heads.
#pragma once

#include <cstddef>

namespace ws {

struct AttentionShape {
  int sequences = 0;
  int seq = 0;
  int heads = 0;
  int head_dim = 0;
  int width() const { return heads * head_dim; }
  std::size_t probs_size() const {
    return static_cast<std::size_t>(sequences) * heads * seq * seq;
  }
};

// out [sequences*seq x width]; probs [sequences x heads x seq x seq] kept for the backward pass.
template <class T>
void attention_forward(const AttentionShape& s, const T* qkv, T* out, T* probs);

// dqkv (overwritten) from dout; `dprobs` is scratch of seq*seq elements.
template <class T>
void attention_backward(const AttentionShape& s, const T* qkv, const T* probs, const T* dout, T* dqkv, T* dprobs);

}  // namespace ws
