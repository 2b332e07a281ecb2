// One pre-LayerNorm GPT block: x + proj(attn(qkv(ln1(x)))) then + fc2(gelu(fc1(ln2(.)))).
// QKV and MLP-up are normal FC layers, the attention output projection and MLP-down transposed
// (../shared/docs/4d-algorithm.md), so activations need no re-layout between layers.
// The activations its backward pass needs live in a BlockActivations the caller passes: one per
// block when they are stored, one shared by all blocks when they are recomputed (--recompute).
// Sharding: the residual stream and the layer norms hold hidden/Gx features (replicated over Y);
// attention runs on the heads/Gy heads of this Y shard (replicated over X).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernels/attention.hpp"
#include "engine/kernels/layer_norm.hpp"
#include "engine/model/fc_layer.hpp"
#include "engine/schedule/model.hpp"

namespace ws {

// Layer norms over the X-sharded residual stream sum their row statistics over X (blocks and the
// final norm alike); nothing to sum when Gx = 1.
template <class T>
ShardSum<T> sum_over_x(const ProcessGrid& grid) {
  if (grid.layout().x == 1) return {};
  return [&grid](T* data, std::size_t count) { grid.group(CommGroup::x).all_reduce_sum(data, count); };
}

// Backward-pass buffers shared by all blocks of a model (only one block runs backward at a time).
template <class T>
struct BlockScratch {
  std::vector<T> d_mid, d_norm, d_att, d_mlp, d_qkv, d_probs;
};

// Saved activations of one block's forward pass, [m x width] row-major with m = sequences * seq.
template <class T>
struct BlockActivations {
  std::vector<T> ln1, mean1, rstd1, qkv_out, probs, att, mid, ln2, mean2, rstd2, up_out, gelu_out, gelu_tanh;
};

template <class T>
class Block {
 public:
  Block(ParameterStore<T>& store, int index, const ModelSpec& spec, const ProcessGrid& grid);

  void init(ParameterStore<T>& store, std::uint64_t seed) const;
  // x_out = block(x_in) for `sequences` local sequences, keeping what backward needs in `a`;
  // x_in must stay alive until backward.
  void forward(const LayerContext<T>& ctx, const T* x_in, T* x_out, int sequences, BlockActivations<T>& a);
  // dx_in (overwritten) from dx_out and this block's activations `a` (kept by forward, or
  // recomputed by a second forward just before); accumulates parameter gradients.
  void backward(const LayerContext<T>& ctx, const T* x_in, const T* dx_out, T* dx_in, const BlockActivations<T>& a,
                BlockScratch<T>& scratch);

  // OAG: start the Z all-gathers of this block's four weight blocks (called one block ahead).
  void start_gathers(const LayerContext<T>& ctx);
  // ORS: complete this block's pending dW reduce-scatters (called one block later).
  void finish_gradients();

  // The block's parameters are one contiguous range of the store (registered together), so its
  // gradients can be reduced as one message as soon as its backward pass is done.
  Tensor parameter_range() const { return range_; }

 private:
  int index_, layers_, hidden_, seq_;
  int width_;  // local width of the residual stream: hidden / Gx
  AttentionShape attention_{};
  Tensor range_{};
  Tensor ln1_gamma_, ln1_beta_, ln2_gamma_, ln2_beta_;
  FcLayer<T> qkv_, proj_, up_, down_;
};

}  // namespace ws
