// RMS normalisation (Zhang & Sennrich 2019; Llama) over the last dimension of a row-major
// [rows x width] matrix whose features may be sharded as layer_norm.hpp's are: the per-row sums
// are added across the shards (an all-reduce over X in the engine) between the stages.
#pragma once

namespace ws {

// Forward, in two stages around one sum over the shards:
//   1. rstd[r] = partial sum of x^2 over this shard's features;  then sum rstd over the shards
//   2. rstd[r] = 1 / sqrt(rstd[r] / full_width + eps), y = x * rstd * gamma.
template <class T>
void rms_norm_row_sums(const T* x, T* rstd, int rows, int width);
template <class T>
void rms_norm_normalize(const T* x, const T* gamma, T* y, T* rstd, int rows, int width, int full_width);

// Backward, in two stages around one sum over the shards (g = dy * gamma):
//   1. sums[r] = partial sum of g * x (overwritten); dgamma += dy * x * rstd
//   2. dx += rstd * (g - x * rstd^2 * sums / full_width).
template <class T>
void rms_norm_backward_sums(const T* dy, const T* x, const T* gamma, const T* rstd, T* sums, T* dgamma, int rows,
                            int width);
template <class T>
void rms_norm_backward_dx(const T* dy, const T* x, const T* gamma, const T* rstd, const T* sums, T* dx, int rows,
                          int width, int full_width);

}  // namespace ws
