// Causal self-attention on a fused QKV matrix, one (sequence, head) at a time, multi-head or
// grouped-query. qkv rows are tokens. Multi-head (GPT): columns are [Q | K | V], each `width` wide
// with head h in columns h*head_dim .. (h+1)*head_dim. Grouped-query (Llama, `grouped`): the
// columns are kv_heads groups, each the group's heads/kv_heads query heads, then its key, then its
// value (Megatron's layout: a Y shard of whole groups is contiguous). `width` = heads * head_dim
// is the local width of the output: when heads are split over Y a rank passes only its own.
#pragma once

#include <cstddef>

namespace ws {

struct AttentionShape {
  int sequences = 0;
  int seq = 0;
  int heads = 0;
  int head_dim = 0;
  int kv_heads = 0;      // key/value heads (grouped); multi-head: as many as heads
  bool grouped = false;  // the grouped-query column layout
  int width() const { return heads * head_dim; }
  int queries_per_group() const { return grouped ? heads / kv_heads : 1; }
  // Columns of one qkv row.
  int qkv_stride() const { return grouped ? kv_heads * (queries_per_group() + 2) * head_dim : 3 * width(); }
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
