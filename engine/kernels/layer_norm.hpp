// Layer normalisation over the last dimension of a row-major [rows x width] matrix. The features
// may be sharded (each rank holds `width` of `full_width` columns); then `sum_over_shards` adds
// per-row partial sums across the shards (an all-reduce over X in the engine). The kernel itself
// knows nothing of MPI.
#pragma once

#include <cstddef>
#include <functional>

namespace ws {

template <class T>
using ShardSum = std::function<void(T* data, std::size_t count)>;

// y = (x - mean) * rstd * gamma + beta; keeps mean and rstd per row for the backward pass.
template <class T>
void layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd, int rows, int width,
                        int full_width, const ShardSum<T>& sum_over_shards = {});

// Accumulates (+=) into dx, dgamma and dbeta: residual branches and weight gradients both sum.
template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx, T* dgamma,
                         T* dbeta, int rows, int width, int full_width, const ShardSum<T>& sum_over_shards = {});

}  // namespace ws
