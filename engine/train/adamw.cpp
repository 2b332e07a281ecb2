#include "engine/train/adamw.hpp"

#include <cmath>

namespace ws {

template <class T>
double gradient_square_share(const ParameterStore<T>& store) {
  double total = 0;  // double: fp32 sums of millions of squares lose digits
  for (const TensorInfo& info : store.tensors()) {
    if (!info.in_norm) continue;
    const T* g = store.grad(info.tensor);
    double sum = 0;
    for (std::size_t i = 0; i < info.tensor.size; ++i) sum += static_cast<double>(g[i]) * static_cast<double>(g[i]);
    total += sum / info.grid_replicas;
  }
  return total;
}

template <class T>
void scale_gradients(ParameterStore<T>& store, T factor) {
  for (T& g : store.grads()) g *= factor;
}

double clip_factor(double norm, double clip_norm) {
  if (clip_norm <= 0 || norm <= clip_norm) return 1.0;
  return clip_norm / norm;
}

template <class T>
AdamW<T>::AdamW(const AdamWConfig& config, std::size_t parameters)
    : config_(config), m_(parameters, T(0)), v_(parameters, T(0)) {}

template <class T>
void AdamW<T>::step(ParameterStore<T>& store, double grad_scale) {
  std::vector<AdamWSegment<T>> segments;
  segments.reserve(store.tensors().size());
  for (const TensorInfo& info : store.tensors())
    segments.push_back(AdamWSegment<T>{store.value(info.tensor), store.grad(info.tensor), info.tensor.offset,
                                       info.tensor.size, info.weight_decay});
  step(segments, grad_scale);
}

template <class T>
void AdamW<T>::step(const std::vector<AdamWSegment<T>>& segments, double grad_scale) {
  ++step_;
  // Per-step constants in double, per-element arithmetic in T: a plain loop the compiler
  // vectorises (the optimizer touches every parameter each step, so it shows at small batches).
  const double correction1 = 1.0 - std::pow(config_.beta1, static_cast<double>(step_));
  const double correction2 = 1.0 - std::pow(config_.beta2, static_cast<double>(step_));
  const T b1 = static_cast<T>(config_.beta1), b2 = static_cast<T>(config_.beta2);
  const T one_minus_b1 = static_cast<T>(1.0 - config_.beta1), one_minus_b2 = static_cast<T>(1.0 - config_.beta2);
  const T step_size = static_cast<T>(config_.learning_rate / correction1);
  const T inverse_correction2 = static_cast<T>(1.0 / correction2);
  const T epsilon = static_cast<T>(config_.epsilon);
  const T scale = static_cast<T>(grad_scale);
  for (const AdamWSegment<T>& s : segments) {
    T* __restrict p = s.value;
    const T* __restrict g = s.grad;
    T* __restrict m = m_.data() + s.moments;
    T* __restrict v = v_.data() + s.moments;
    const T decay = static_cast<T>(config_.learning_rate * (s.weight_decay ? config_.weight_decay : 0.0));
    for (std::size_t i = 0; i < s.size; ++i) {
      const T grad = g[i] * scale;
      m[i] = b1 * m[i] + one_minus_b1 * grad;
      v[i] = b2 * v[i] + one_minus_b2 * grad * grad;
      p[i] -= step_size * m[i] / (std::sqrt(v[i] * inverse_correction2) + epsilon) + decay * p[i];
    }
  }
}

template void scale_gradients<float>(ParameterStore<float>&, float);
template void scale_gradients<double>(ParameterStore<double>&, double);
template double gradient_square_share<float>(const ParameterStore<float>&);
template double gradient_square_share<double>(const ParameterStore<double>&);
template class AdamW<float>;
template class AdamW<double>;

}  // namespace ws
