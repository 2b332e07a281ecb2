#include "engine/kernels/rms_norm.hpp"

#include <cmath>
#include <cstddef>

namespace ws {

namespace {
constexpr double kRmsEpsilon = 1e-5;  // Llama 2's rms_norm_eps (released configs)
std::size_t rms_row(int row, int width) { return static_cast<std::size_t>(row) * static_cast<std::size_t>(width); }
}  // namespace

template <class T>
void rms_norm_row_sums(const T* x, T* rstd, int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    const T* xr = x + rms_row(r, width);
    T sum = 0;
    for (int i = 0; i < width; ++i) sum += xr[i] * xr[i];
    rstd[r] = sum;
  }
}

template <class T>
void rms_norm_normalize(const T* x, const T* gamma, T* y, T* rstd, int rows, int width, int full_width) {
  const T n = static_cast<T>(full_width);
  for (int r = 0; r < rows; ++r) {
    rstd[r] = T(1) / std::sqrt(rstd[r] / n + static_cast<T>(kRmsEpsilon));
    const T* xr = x + rms_row(r, width);
    T* yr = y + rms_row(r, width);
    for (int i = 0; i < width; ++i) yr[i] = xr[i] * rstd[r] * gamma[i];
  }
}

template <class T>
void rms_norm_backward_sums(const T* dy, const T* x, const T* gamma, const T* rstd, T* sums, T* dgamma, int rows,
                            int width) {
  for (int r = 0; r < rows; ++r) {
    const T* dyr = dy + rms_row(r, width);
    const T* xr = x + rms_row(r, width);
    T sum = 0;
    for (int i = 0; i < width; ++i) {
      sum += dyr[i] * gamma[i] * xr[i];
      dgamma[i] += dyr[i] * xr[i] * rstd[r];
    }
    sums[r] = sum;
  }
}

template <class T>
void rms_norm_backward_dx(const T* dy, const T* x, const T* gamma, const T* rstd, const T* sums, T* dx, int rows,
                          int width, int full_width) {
  const T n = static_cast<T>(full_width);
  for (int r = 0; r < rows; ++r) {
    const T* dyr = dy + rms_row(r, width);
    const T* xr = x + rms_row(r, width);
    T* dxr = dx + rms_row(r, width);
    const T s = rstd[r], c = s * s * sums[r] / n;
    for (int i = 0; i < width; ++i) dxr[i] += s * (dyr[i] * gamma[i] - xr[i] * c);
  }
}

#define WS_RMS_NORM(T)                                                                                   \
  template void rms_norm_row_sums<T>(const T*, T*, int, int);                                            \
  template void rms_norm_normalize<T>(const T*, const T*, T*, T*, int, int, int);                        \
  template void rms_norm_backward_sums<T>(const T*, const T*, const T*, const T*, T*, T*, int, int);     \
  template void rms_norm_backward_dx<T>(const T*, const T*, const T*, const T*, const T*, T*, int, int, int);
WS_RMS_NORM(float)
WS_RMS_NORM(double)
#undef WS_RMS_NORM

}  // namespace ws
