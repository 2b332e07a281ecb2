#include "engine/kernels/layer_norm.hpp"

#include <cmath>
#include <vector>

namespace ws {

namespace {
constexpr double kEpsilon = 1e-5;  // as GPT-2's layer norm
}

template <class T>
void layer_norm_row_sums(const T* x, T* mean, int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    const T* xr = x + static_cast<std::size_t>(r) * width;
    T sum = 0;
    for (int i = 0; i < width; ++i) sum += xr[i];
    mean[r] = sum;
  }
}

template <class T>
void layer_norm_deviations(const T* x, T* mean, T* rstd, int rows, int width, int full_width) {
  const auto n = static_cast<T>(full_width);
  for (int r = 0; r < rows; ++r) {
    const T* xr = x + static_cast<std::size_t>(r) * width;
    mean[r] /= n;
    T var = 0;
    for (int i = 0; i < width; ++i) var += (xr[i] - mean[r]) * (xr[i] - mean[r]);
    rstd[r] = var;
  }
}

template <class T>
void layer_norm_normalize(const T* x, const T* gamma, const T* beta, T* y, const T* mean, T* rstd, int rows,
                          int width, int full_width) {
  const auto n = static_cast<T>(full_width);
  for (int r = 0; r < rows; ++r) {
    rstd[r] = T(1) / std::sqrt(rstd[r] / n + static_cast<T>(kEpsilon));
    const T* xr = x + static_cast<std::size_t>(r) * width;
    T* yr = y + static_cast<std::size_t>(r) * width;
    for (int i = 0; i < width; ++i) yr[i] = (xr[i] - mean[r]) * rstd[r] * gamma[i] + beta[i];
  }
}

template <class T>
void layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd, int rows, int width,
                        int full_width, const ShardSum<T>& sum_over_shards) {
  layer_norm_row_sums(x, mean, rows, width);
  if (sum_over_shards) sum_over_shards(mean, static_cast<std::size_t>(rows));
  layer_norm_deviations(x, mean, rstd, rows, width, full_width);
  if (sum_over_shards) sum_over_shards(rstd, static_cast<std::size_t>(rows));
  layer_norm_normalize(x, gamma, beta, y, mean, rstd, rows, width, full_width);
}

template <class T>
void layer_norm_backward_sums(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* sums,
                              T* dgamma, T* dbeta, int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t off = static_cast<std::size_t>(r) * width;
    T sum_g = 0, sum_gx = 0;
    for (int i = 0; i < width; ++i) {
      const T xhat = (x[off + i] - mean[r]) * rstd[r];
      const T g = dy[off + i] * gamma[i];
      sum_g += g;
      sum_gx += g * xhat;
      dgamma[i] += dy[off + i] * xhat;
      dbeta[i] += dy[off + i];
    }
    sums[2 * r] = sum_g;
    sums[2 * r + 1] = sum_gx;
  }
}

template <class T>
void layer_norm_backward_dx(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, const T* sums,
                            T* dx, int rows, int width, int full_width) {
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

template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx, T* dgamma,
                         T* dbeta, int rows, int width, int full_width, const ShardSum<T>& sum_over_shards) {
  std::vector<T> sums(2 * static_cast<std::size_t>(rows));
  layer_norm_backward_sums(dy, x, gamma, mean, rstd, sums.data(), dgamma, dbeta, rows, width);
  if (sum_over_shards) sum_over_shards(sums.data(), sums.size());
  layer_norm_backward_dx(dy, x, gamma, mean, rstd, sums.data(), dx, rows, width, full_width);
}

#define WS_INSTANTIATE(T)                                                                                 \
  template void layer_norm_row_sums<T>(const T*, T*, int, int);                                           \
  template void layer_norm_deviations<T>(const T*, T*, T*, int, int, int);                                \
  template void layer_norm_normalize<T>(const T*, const T*, const T*, T*, const T*, T*, int, int, int);   \
  template void layer_norm_forward<T>(const T*, const T*, const T*, T*, T*, T*, int, int, int,            \
                                      const ShardSum<T>&);                                                \
  template void layer_norm_backward_sums<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, \
                                            int, int);                                                    \
  template void layer_norm_backward_dx<T>(const T*, const T*, const T*, const T*, const T*, const T*, T*, \
                                          int, int, int);                                                 \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, int, int, \
                                       int, const ShardSum<T>&);
WS_INSTANTIATE(float)
WS_INSTANTIATE(double)
#undef WS_INSTANTIATE

}  // namespace ws
