#include "engine/kernels/gemm_tuner.hpp"

#include <algorithm>
#include <chrono>

namespace ws {

template <class T>
void GemmTuner<T>::run(const GemmArgs<T>& g) {
  if (has_forced_) return gemm_variant(forced_, g, scratch_);
  if (!enabled_) return gemm(g);
  const GemmShape shape{g.op_a, g.op_b, g.m, g.n, g.k};
  auto it = choices_.find(shape);
  if (it == choices_.end()) it = choices_.emplace(shape, tune(g)).first;
  gemm_variant(it->second.variant, g, scratch_);
}

template <class T>
void GemmTuner<T>::run(Op op_a, Op op_b, int m, int n, int k, T alpha, const T* a, const T* b, T beta, T* c) {
  run(GemmArgs<T>{op_a, op_b, m, n, k, alpha, a, op_a == Op::n ? k : m, b, op_b == Op::n ? n : k, beta, c, n});
}

template <class T>
GemmChoice GemmTuner<T>::tune(const GemmArgs<T>& g) {
  using Clock = std::chrono::steady_clock;
  // Trials write into a copy of C so the real C is touched once, by the winner.
  const std::size_t c_size = g.m == 0 ? 0 : static_cast<std::size_t>(g.m - 1) * g.ldc + g.n;
  GemmArgs<T> trial = g;
  GemmChoice best{};
  bool first = true;
  constexpr int kRepeats = 2;  // first run warms caches and BLAS's buffers; keep the faster
  for (GemmVariant v : kGemmVariants) {
    double seconds = 1e300;
    for (int r = 0; r < kRepeats; ++r) {
      c_trial_.assign(g.c, g.c + c_size);
      trial.c = c_trial_.data();
      const auto start = Clock::now();
      gemm_variant(v, trial, scratch_);
      seconds = std::min(seconds, std::chrono::duration<double>(Clock::now() - start).count());
    }
    if (v == GemmVariant::row_major) best.baseline_seconds = seconds;
    if (first || seconds < best.best_seconds) {
      best.variant = v;
      best.best_seconds = seconds;
      first = false;
    }
  }
  return best;
}

template class GemmTuner<float>;
template class GemmTuner<double>;

}  // namespace ws
