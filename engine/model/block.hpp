// One pre-norm transformer block: x + proj(attn(qkv(ln1(x)))) then + down(act(up(ln2(.)))).
// GPT-2 style: LayerNorm, GELU, multi-head attention, biases. Llama style: RMSNorm, SwiGLU (up holds
// the gate and up columns), grouped-query attention with rotary positions on Q and K, no biases.
// QKV and MLP-up are normal FC layers, the attention output projection and MLP-down transposed
// (../shared/docs/4d-algorithm.md), so activations need no re-layout between layers.
// The block runs no sequence of its own: the step schedule orders its ops (norm stages, FC ops,
// attention, GELU, residuals) and the block runs each on the buffers the caller names.
// The activations its backward pass needs live in a BlockActivations the caller passes: one per
// block when they are stored, one shared by all blocks when they are recomputed (--recompute).
// Sharding: the residual stream and the layer norms hold hidden/Gx features (replicated over Y);
// attention runs on the heads/Gy heads of this Y shard (replicated over X). With Megatron-LM's
// sequence parallelism (Layout::sequence_parallel, Gx = 1) the residual stream and the norms hold
// a contiguous 1/Gy of the micro-batch's rows instead: a column-parallel layer all-gathers its
// input's rows over Y, a row-parallel one reduce-scatters its output into them (and backward the
// reverse), as the step schedule's SP collectives say.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernels/attention.hpp"
#include "engine/kernels/layer_norm.hpp"
#include "engine/model/fc_layer.hpp"
#include "workload/model.hpp"

namespace ws {

// Backward-pass buffers shared by all blocks of a model (only one block runs backward at a time).
template <class T>
struct BlockScratch {
  std::vector<T> d_mid, d_norm, d_att, d_mlp, d_qkv, d_probs;
  std::vector<T> d_up;  // SwiGLU: the gradient of the gate and up columns (GELU works in d_mlp)
  std::vector<T> norm_sums;  // a layer norm's backward row sums (the final norm's too)
  // Sequence parallelism: a column-parallel layer's input gathered over Y (forward, and again for
  // dW in backward), a layer's full-sequence partial output or dX before its reduce-scatter, and a
  // row-parallel layer's output gradient gathered over Y. Each m x hidden.
  std::vector<T> sequence_input, sequence_partial, sequence_dy;
};

// Saved activations of one block's forward pass, [m x width] row-major with m = sequences * seq;
// with sequence parallelism the norms' inputs, outputs and statistics and the attention residual
// `mid` hold the rank's m / Gy rows only.
template <class T>
struct BlockActivations {
  // gelu_out is the MLP activation's output (GELU or SwiGLU); gelu_tanh only GELU's saved tanh.
  std::vector<T> ln1, mean1, rstd1, qkv_out, probs, att, mid, ln2, mean2, rstd2, up_out, gelu_out, gelu_tanh;
};

// What one block op reads and writes: the block's input and output in the residual stream, their
// gradients (backward), its activations (kept by forward, or recomputed) and the shared scratch.
template <class T>
struct BlockBuffers {
  const T* x_in = nullptr;
  T* x_out = nullptr;
  const T* dx_out = nullptr;
  T* dx_in = nullptr;
  BlockActivations<T>* activations = nullptr;
  BlockScratch<T>* scratch = nullptr;
};

template <class T>
class Block {
 public:
  Block(ParameterStore<T>& store, int index, const ModelSpec& spec, const ProcessGrid& grid);

  void init(ParameterStore<T>& store, std::uint64_t seed) const;
  // Sizes the block's ops for `sequences` local sequences and `a` for its forward pass.
  void prepare(int sequences, BlockActivations<T>& a);

  // Runs a compute op of this block (StepOp::block == this block) on `io`; a forward op keeps
  // what backward needs in io.activations, a backward op accumulates parameter gradients.
  void compute(const StepOp& op, const LayerContext<T>& ctx, const BlockBuffers<T>& io);
  // Where a collective op of this block finds its data.
  CollectiveBuffers<T> buffers(const StepOp& op, ParameterStore<T>& store, const BlockBuffers<T>& io);

  // The block's parameters are one contiguous range of the store (registered together).
  Tensor parameter_range() const { return range_; }

 private:
  // A layer norm's operands: ln1 normalises the block input, ln2 the attention residual `mid`.
  struct NormOperands {
    const T* x;
    T* y;
    T* mean;
    T* rstd;
    Tensor gamma, beta;
    const T* dy;
    T* dx;
  };
  NormOperands norm(int layer, const BlockBuffers<T>& io) const;
  // An FC layer's operands: input, output, output gradient, input gradient (all of the
  // micro-batch's rows), and with sequence parallelism the residual-stream side's sequence shard of
  // one of them: the column-parallel input (and its dX), or the row-parallel output (and its dY).
  struct FcOperands {
    FcLayer<T>* layer;
    const T* x;
    T* y;
    const T* dy;
    T* dx;
    const T* shard_in = nullptr;  // x (column-parallel) or dy (row-parallel): gathered over Y
    T* shard_out = nullptr;       // dx (column-parallel) or y (row-parallel): reduce-scattered into
  };
  FcOperands fc(int layer, const BlockBuffers<T>& io);
  void compute_norm(const StepOp& op, ParameterStore<T>& store, const BlockBuffers<T>& io);
  void compute_fc(const StepOp& op, const LayerContext<T>& ctx, const BlockBuffers<T>& io);
  CollectiveBuffers<T> sequence_buffers(const StepOp& op, const BlockBuffers<T>& io);
  int rows() const { return attention_.sequences * seq_; }
  // The rows of the residual stream and the norms on this rank: all, or 1/Gy with sequence
  // parallelism.
  int shard_rows() const { return rows() / sequence_split_; }
  void rope(T* qkv, bool inverse) const;

  int index_, layers_, hidden_, seq_;
  NormKind norm_kind_;
  Activation activation_;
  Position position_;
  double rope_base_;
  std::vector<int> rope_columns_;  // first columns of this rank's query and key heads in a qkv row
  int width_;  // local width of the residual stream: hidden / Gx
  int sequence_split_;  // Gy with sequence parallelism, else 1
  AttentionShape attention_{};
  Tensor range_{};
  Tensor ln1_gamma_, ln1_beta_, ln2_gamma_, ln2_beta_;
  FcLayer<T> qkv_, proj_, up_, down_;
};

}  // namespace ws
