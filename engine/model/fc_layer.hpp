// One fully-connected layer Y = X W + b of ../shared/docs/4d-algorithm.md. W is k x n (k in-, n
// out-features). A "normal" layer splits in-features over X and out-features over Y; a
// "transposed" layer swaps the roles of X and Y, so a normal layer's output is directly the next
// transposed layer's input. The layer stores and computes on its local block only.
//
// Over Z the block is flattened and cut into Gz shards: forward all-gathers it (and keeps it for
// backward: the memory-for-time choice of the algorithm note), backward reduce-scatters dW.
// The forward X/Y all-reduce is blocking (on the critical path, as in the sources); OAR, ORS and
// OAG follow LayerContext::overlap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/comm/process_grid.hpp"
#include "engine/kernels/gemm_tuner.hpp"
#include "engine/model/overlap.hpp"
#include "engine/model/parameters.hpp"

namespace ws {

enum class FcOrientation { normal, transposed };

// What every layer computes with: the rank's parameters, its GEMM tuner and its process grid.
template <class T>
struct LayerContext {
  ParameterStore<T>& store;
  GemmTuner<T>& tuner;
  const ProcessGrid& grid;
  OverlapOptions overlap{};
  // Where in the step the layer runs, for timeline event names: "fwd", "bwd" or "recompute".
  const char* phase = "fwd";
};

template <class T>
class FcLayer {
 public:
  // `column_groups` > 1 splits the out-features into that many equal groups, each sharded on its
  // own over the out-group: the fused QKV layer uses 3, so a Y shard holds the Q, K and V columns
  // of the same heads.
  FcLayer(ParameterStore<T>& store, const std::string& name, int in_features, int out_features,
          FcOrientation orientation, const ProcessGrid& grid, int column_groups = 1);

  // Draws the full k x n matrix from N(0, stddev) with a stream per (seed, stream_id) and keeps
  // the local block, so every layout starts from the same global weights; bias = 0.
  void init(ParameterStore<T>& store, std::uint64_t seed, std::uint64_t stream_id, double stddev) const;

  // y [m x out_local] = x [m x in_local] W + b; the partial product is summed over the in-group.
  void forward(const LayerContext<T>& ctx, const T* x, T* y, int m);
  // dx (overwritten) = dy W^T summed over the out-group; dW += x^T dy; db += column sums of dy.
  // With ORS and Gz > 1 the weight gradient is final only after finish_gradient().
  void backward(const LayerContext<T>& ctx, const T* x, const T* dy, T* dx, int m);

  // OAG: begin the Z all-gather of the weight block now; forward waits for it. No-op if Gz = 1.
  void start_gather(const LayerContext<T>& ctx);
  // ORS: complete a pending dW reduce-scatter and add it to the gradient shard.
  void finish_gradient();

  int in_features() const { return k_; }
  int out_features() const { return n_; }
  int in_local() const { return k_local_; }
  int out_local() const { return n_local_; }
  FcOrientation orientation() const { return orientation_; }
  CommGroup in_group() const { return orientation_ == FcOrientation::normal ? CommGroup::x : CommGroup::y; }
  CommGroup out_group() const { return orientation_ == FcOrientation::normal ? CommGroup::y : CommGroup::x; }

 private:
  int k_, n_;
  std::string gemm_name_, dx_name_, dw_name_, bias_name_;  // timeline: "block3.qkv.gemm", ...
  FcOrientation orientation_;
  int column_groups_;
  int k_local_, n_local_;
  int k_first_;          // first local row in the full matrix
  int out_coordinate_;   // this rank's index in the out-group
  Tensor weight_, bias_;
  std::size_t tensor_index_ = 0;  // the weight's entry in the store's tensor list (its ShardMap)
  int z_size_;
  std::vector<T> block_, block_grad_, shard_grad_;  // gathered block and dW buffers when Gz > 1
  Request gather_, scatter_;
  bool gathered_ahead_ = false, scatter_pending_ = false;
  T* pending_grad_ = nullptr;

  const T* block_weight(const LayerContext<T>& ctx) const;
};

}  // namespace ws
