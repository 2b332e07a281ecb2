#include "engine/kernels/swiglu.hpp"

#include <cmath>
#include <cstddef>

namespace ws {

namespace {
template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}
}  // namespace

template <class T>
void swiglu_forward(const T* gate_up, T* out, int rows, int width) {
  const auto w = static_cast<std::size_t>(width);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const T* gate = gate_up + r * 2 * w;
    const T* up = gate + w;
    T* o = out + r * w;
    for (std::size_t i = 0; i < w; ++i) o[i] = gate[i] * sigmoid(gate[i]) * up[i];
  }
}

template <class T>
void swiglu_backward(const T* gate_up, const T* dout, T* d_gate_up, int rows, int width) {
  const auto w = static_cast<std::size_t>(width);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const T* gate = gate_up + r * 2 * w;
    const T* up = gate + w;
    const T* d = dout + r * w;
    T* dgate = d_gate_up + r * 2 * w;
    T* dup = dgate + w;
    for (std::size_t i = 0; i < w; ++i) {
      const T s = sigmoid(gate[i]);
      dup[i] = d[i] * gate[i] * s;
      dgate[i] = d[i] * up[i] * s * (T(1) + gate[i] * (T(1) - s));
    }
  }
}

template void swiglu_forward<float>(const float*, float*, int, int);
template void swiglu_forward<double>(const double*, double*, int, int);
template void swiglu_backward<float>(const float*, const float*, float*, int, int);
template void swiglu_backward<double>(const double*, const double*, double*, int, int);

}  // namespace ws
