// Layer normalisation over the last dimension of a row-major [rows x width] matrix. The features
// may be sharded (each rank holds `width` of `full_width` columns); then per-row partial sums are
// added across the shards (an all-reduce over X in the engine) between the kernel's stages. The
// kernel itself knows nothing of MPI: the engine runs the stages as separate ops of its step
// schedule with the sums in between; the whole-kernel functions chain them with `sum_over_shards`.
#pragma once

#include <cstddef>
#include <functional>

namespace ws {

template <class T>
using ShardSum = std::function<void(T* data, std::size_t count)>;

// Forward, in three stages around two sums over the shards (two-pass variance is accurate where
// E[x^2] - E[x]^2 cancels badly):
//   1. mean[r] = partial row sum of x;                    then sum mean over the shards
//   2. mean[r] /= full_width, rstd[r] = partial sum of squared deviations; then sum rstd
//   3. rstd[r] = 1 / sqrt(rstd[r] / full_width + eps), y = (x - mean) * rstd * gamma + beta.
template <class T>
void layer_norm_row_sums(const T* x, T* mean, int rows, int width);
template <class T>
void layer_norm_deviations(const T* x, T* mean, T* rstd, int rows, int width, int full_width);
template <class T>
void layer_norm_normalize(const T* x, const T* gamma, const T* beta, T* y, const T* mean, T* rstd, int rows,
                          int width, int full_width);

// y = (x - mean) * rstd * gamma + beta; keeps mean and rstd per row for the backward pass.
template <class T>
void layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd, int rows, int width,
                        int full_width, const ShardSum<T>& sum_over_shards = {});

// Backward, in two stages around one sum over the shards. `sums` holds 2 * rows values: the
// partial sums of g = dy * gamma and of g * xhat, interleaved per row.
//   1. sums = those partial sums (overwritten); dgamma += dy * xhat, dbeta += dy
//   2. dx += rstd * (g - mean(g) - xhat * mean(g * xhat)), the means over all features.
template <class T>
void layer_norm_backward_sums(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* sums,
                              T* dgamma, T* dbeta, int rows, int width);
template <class T>
void layer_norm_backward_dx(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, const T* sums,
                            T* dx, int rows, int width, int full_width);

// Accumulates (+=) into dx, dgamma and dbeta: residual branches and weight gradients both sum.
template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx, T* dgamma,
                         T* dbeta, int rows, int width, int full_width, const ShardSum<T>& sum_over_shards = {});

}  // namespace ws
