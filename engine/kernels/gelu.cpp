#include "engine/kernels/gelu.hpp"

#include <cmath>

namespace ws {

namespace {
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubic = 0.044715;
}  // namespace

template <class T>
void gelu_forward(const T* x, T* y, T* tanh_out, std::size_t count) {
  const T c = static_cast<T>(kSqrt2OverPi), a = static_cast<T>(kCubic);
  for (std::size_t i = 0; i < count; ++i) {
    const T v = x[i];
    const T th = std::tanh(c * (v + a * v * v * v));
    tanh_out[i] = th;
    y[i] = T(0.5) * v * (T(1) + th);
  }
}

template <class T>
void gelu_backward(const T* x, const T* tanh_in, const T* dy, T* dx, std::size_t count) {
  const T c = static_cast<T>(kSqrt2OverPi), a = static_cast<T>(kCubic);
  for (std::size_t i = 0; i < count; ++i) {
    const T v = x[i];
    const T th = tanh_in[i];
    const T sech2 = T(1) - th * th;
    const T grad = T(0.5) * (T(1) + th) + T(0.5) * v * sech2 * c * (T(1) + T(3) * a * v * v);
    dx[i] = dy[i] * grad;
  }
}

template void gelu_forward<float>(const float*, float*, float*, std::size_t);
template void gelu_forward<double>(const double*, double*, double*, std::size_t);
template void gelu_backward<float>(const float*, const float*, const float*, float*, std::size_t);
template void gelu_backward<double>(const double*, const double*, const double*, double*, std::size_t);

}  // namespace ws
