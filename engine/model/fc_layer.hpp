// One fully-connected layer Y = X W + b of ../shared/docs/4d-algorithm.md. W is k x n (k in-, n
// out-features). A "normal" layer splits in-features over X and out-features over Y; a
// "transposed" layer swaps the roles of X and Y, so a normal layer's output is directly the next
// transposed layer's input. The layer stores and computes on its local block only.
//
// Over Z the block is flattened and cut into Gz shards: forward all-gathers it (and keeps it for
// backward: the memory-for-time choice of the algorithm note), backward reduce-scatters dW.
// The layer does not order its own work: it provides the ops (GEMMs, bias, gradient steps, and
// the buffers of its collectives) that the step schedule places (StepTask::weight_gather, fc_*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/comm/process_grid.hpp"
#include "engine/kernels/gemm_tuner.hpp"
#include "engine/model/schedule_runner.hpp"
#include "engine/model/parameters.hpp"

namespace ws {

enum class FcOrientation { normal, transposed };

// What every layer computes with: the rank's parameters, its GEMM tuner and its process grid.
template <class T>
struct LayerContext {
  ParameterStore<T>& store;
  GemmTuner<T>& tuner;
  const ProcessGrid& grid;
};

template <class T>
class FcLayer {
 public:
  // `column_groups` > 1 splits the out-features into that many equal groups, each sharded on its
  // own over the out-group: the fused QKV layer uses 3, so a Y shard holds the Q, K and V columns
  // of the same heads.
  // Without `bias` the layer registers no bias (Llama): the schedule then adds and derives none.
  FcLayer(ParameterStore<T>& store, const std::string& name, int in_features, int out_features,
          FcOrientation orientation, const ProcessGrid& grid, int column_groups = 1, bool bias = true);

  // Draws the full k x n matrix from N(0, stddev) with a stream per (seed, stream_id) and keeps
  // the local block, so every layout starts from the same global weights; bias = 0.
  void init(ParameterStore<T>& store, std::uint64_t seed, std::uint64_t stream_id, double stddev) const;

  // Forward, y [m x out_local] = x [m x in_local] W + b: with Gz > 1 the weight block is first
  // all-gathered over Z (and kept for backward: the memory-for-time choice of the algorithm note),
  // then the GEMM's partial product is summed over the in-group, then the bias added once.
  CollectiveBuffers<T> weight_gather(ParameterStore<T>& store);
  void forward_gemm(const LayerContext<T>& ctx, const T* x, T* y, int m) const;
  CollectiveBuffers<T> output_sum(T* y, int m) const { return {y, y, static_cast<std::size_t>(m) * n_local_}; }
  void add_bias(const ParameterStore<T>& store, T* y, int m) const;

  // Backward: dx (overwritten) = dy W^T, summed over the out-group; dW = x^T dy into the gradient
  // (Gz = 1) or the block gradient, whose Z reduce-scatter gives this rank's shard, added to the
  // gradient by add_gradient_shard; db += column sums of dy.
  void dx_gemm(const LayerContext<T>& ctx, const T* dy, T* dx, int m) const;
  CollectiveBuffers<T> dx_sum(T* dx, int m) const { return {dx, dx, static_cast<std::size_t>(m) * k_local_}; }
  void dw_gemm(const LayerContext<T>& ctx, const T* x, const T* dy, int m);
  CollectiveBuffers<T> dw_scatter();
  void add_gradient_shard(ParameterStore<T>& store) const;
  void bias_grad(ParameterStore<T>& store, const T* dy, int m) const;

  int in_features() const { return k_; }
  int out_features() const { return n_; }
  int in_local() const { return k_local_; }
  int out_local() const { return n_local_; }
  FcOrientation orientation() const { return orientation_; }
  CommGroup in_group() const { return orientation_ == FcOrientation::normal ? CommGroup::x : CommGroup::y; }
  CommGroup out_group() const { return orientation_ == FcOrientation::normal ? CommGroup::y : CommGroup::x; }

 private:
  int k_, n_;
  FcOrientation orientation_;
  int column_groups_;
  int k_local_, n_local_;
  int k_first_;          // first local row in the full matrix
  int out_coordinate_;   // this rank's index in the out-group
  Tensor weight_, bias_;
  std::size_t tensor_index_ = 0;  // the weight's entry in the store's tensor list (its ShardMap)
  int z_size_;
  std::vector<T> block_, block_grad_, shard_grad_;  // gathered block and dW buffers when Gz > 1

  const T* block_weight(const ParameterStore<T>& store) const;
};

}  // namespace ws
