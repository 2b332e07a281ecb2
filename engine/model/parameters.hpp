// All trainable tensors of one rank in one flat buffer (values and gradients side by side), so the
// optimizer, gradient clipping and the data-parallel all-reduce each see one contiguous array.
// Layers hold Tensor handles (offset, size) into it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

// Which ranks hold copies of a tensor, and so how its gradient is completed after backward
// (../shared/docs/4d-algorithm.md: "parameters that are not sharded by Z ... all-reduced over data
// and Z").
enum class Replication {
  z_sharded,   // FC weights: a rank's own Z shard; reduce-scattered over Z in backward, then data
  replicated,  // biases, norms, embeddings: complete copies on every Z rank; data x Z
};

struct Tensor {
  std::size_t offset = 0;
  std::size_t size = 0;
};

// Where a rank's local block of a tensor lies in the full (unsharded) row-major tensor: local rows
// are consecutive full rows from first_row; local columns come in chunks of `chunk` columns, chunk
// c starting at full column c * group_stride + first_col (one chunk per column group: the fused
// QKV weight has three). Used to compare layouts and, later, to re-shard checkpoints.
struct ShardMap {
  int full_rows = 1, full_cols = 1;
  int first_row = 0;
  int local_cols = 1;
  int chunk = 1, group_stride = 1, first_col = 0;
  // A Z-sharded tensor holds elements [block_offset, block_offset + size) of the flattened X x Y
  // block described above.
  std::size_t block_offset = 0;

  // The unsharded tensor, or a plain slice of columns.
  static ShardMap columns(int rows, int full_cols, int first_col, int local_cols) {
    return ShardMap{rows, full_cols, 0, local_cols, local_cols, full_cols, first_col, 0};
  }
  std::size_t global_index(std::size_t local) const {
    local += block_offset;
    const auto i = local / local_cols, j = local % local_cols;
    const std::size_t col = (j / chunk) * group_stride + first_col + j % chunk;
    return (first_row + i) * static_cast<std::size_t>(full_cols) + col;
  }
};

struct TensorInfo {
  std::string name;
  Tensor tensor;
  bool weight_decay = false;  // AdamW decays matrices, not biases / norms (GPT-2 practice)
  Replication replication = Replication::replicated;
  // Copies of each element across the X x Y x Z grid (e.g. Gy * Gz for a layer norm sharded over
  // X): a global sum over the grid, such as the gradient norm, counts each element once.
  int grid_replicas = 1;
  ShardMap shard;
  // False for a copy whose gradient another stage's share already counts (the last pipeline
  // stage's copy of the tied embedding, whose gradient both stages sum).
  bool in_norm = true;
};

template <class T>
class ParameterStore {
 public:
  // Registration happens while building the model; the buffers grow, so pointers are taken only
  // after construction has finished.
  Tensor add(std::string name, std::size_t size, bool weight_decay, Replication replication, int grid_replicas,
             const ShardMap& shard);

  T* value(Tensor t) { return values_.data() + t.offset; }
  const T* value(Tensor t) const { return values_.data() + t.offset; }
  T* grad(Tensor t) { return grads_.data() + t.offset; }
  const T* grad(Tensor t) const { return grads_.data() + t.offset; }

  std::vector<T>& values() { return values_; }
  const std::vector<T>& values() const { return values_; }
  std::vector<T>& grads() { return grads_; }
  const std::vector<T>& grads() const { return grads_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  std::size_t size() const { return values_.size(); }

  void zero_grads();
  // The tensor registered under `name`, or nullptr.
  const TensorInfo* find(std::string_view name) const;
  void exclude_from_norm(Tensor t);

 private:
  std::vector<T> values_;
  std::vector<T> grads_;
  std::vector<TensorInfo> tensors_;
};

}  // namespace ws
