#include "engine/kernels/layer_norm.hpp"

#include <cmath>
#include <vector>

namespace ws {

namespace {
constexpr double kEpsilon = 1e-5;  // as GPT-2's layer norm
}

template <class T>
void layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd, int rows, int width,
                        int full_width, const ShardSum<T>& sum_over_shards) {
  const auto n = static_cast<T>(full_width);
  auto row = [&](const T* base, int r) { return base + static_cast<std::size_t>(r) * width; };
  // Pass 1: row sums (one reduction for all rows); pass 2: squared deviations (two-pass variance
  // is accurate where E[x^2] - E[x]^2 cancels badly).
  for (int r = 0; r < rows; ++r) {
    T sum = 0;
    for (int i = 0; i < width; ++i) sum += row(x, r)[i];
    mean[r] = sum;
  }
  if (sum_over_shards) sum_over_shards(mean, static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    mean[r] /= n;
    T var = 0;
    for (int i = 0; i < width; ++i) var += (row(x, r)[i] - mean[r]) * (row(x, r)[i] - mean[r]);
    rstd[r] = var;
  }
  if (sum_over_shards) sum_over_shards(rstd, static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    rstd[r] = T(1) / std::sqrt(rstd[r] / n + static_cast<T>(kEpsilon));
    const T* xr = row(x, r);
    T* yr = y + static_cast<std::size_t>(r) * width;
    for (int i = 0; i < width; ++i) yr[i] = (xr[i] - mean[r]) * rstd[r] * gamma[i] + beta[i];
  }
}

template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx, T* dgamma,
                         T* dbeta, int rows, int width, int full_width, const ShardSum<T>& sum_over_shards) {
  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma; the two means run over
  // all features, so their partial sums (interleaved per row) are reduced across shards.
  std::vector<T> sums(2 * static_cast<std::size_t>(rows), T(0));
  for (int r = 0; r < rows; ++r) {
    const std::size_t off = static_cast<std::size_t>(r) * width;
    for (int i = 0; i < width; ++i) {
      const T xhat = (x[off + i] - mean[r]) * rstd[r];
      const T g = dy[off + i] * gamma[i];
      sums[2 * r] += g;
      sums[2 * r + 1] += g * xhat;
      dgamma[i] += dy[off + i] * xhat;
      dbeta[i] += dy[off + i];
    }
  }
  if (sum_over_shards) sum_over_shards(sums.data(), sums.size());
  const auto n = static_cast<T>(full_width);
  for (int r = 0; r < rows; ++r) {
    const std::size_t off = static_cast<std::size_t>(r) * width;
    const T mean_g = sums[2 * r] / n, mean_gx = sums[2 * r + 1] / n;
    for (int i = 0; i < width; ++i) {
      const T xhat = (x[off + i] - mean[r]) * rstd[r];
      dx[off + i] += rstd[r] * (dy[off + i] * gamma[i] - mean_g - xhat * mean_gx);
    }
  }
}

#define WS_INSTANTIATE(T)                                                                                 \
  template void layer_norm_forward<T>(const T*, const T*, const T*, T*, T*, T*, int, int, int,            \
                                      const ShardSum<T>&);                                                \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, int, int, \
                                       int, const ShardSum<T>&);
WS_INSTANTIATE(float)
WS_INSTANTIATE(double)
#undef WS_INSTANTIATE

}  // namespace ws
