// First-time-per-shape GEMM autotuner: the first product of a given (flags, m, n, k) times every
// GemmVariant and remembers the fastest; later products of that shape use it directly. One tuner
// belongs to one engine run (no global table), so two runs in a process never share timings.
#pragma once

#include <cstddef>
#include <map>
#include <tuple>
#include <vector>

#include "engine/kernels/gemm.hpp"

namespace ws {

struct GemmShape {
  Op op_a = Op::n, op_b = Op::n;
  int m = 0, n = 0, k = 0;
  friend auto operator<=>(const GemmShape&, const GemmShape&) = default;
};

struct GemmChoice {
  GemmVariant variant = GemmVariant::row_major;
  double best_seconds = 0;      // the winner's time while tuning
  double baseline_seconds = 0;  // the plain row_major time while tuning (what tuning gains)
};

template <class T>
class GemmTuner {
 public:
  // Tuning off: every product takes the row_major path (reproducible, no timing runs).
  explicit GemmTuner(bool enabled = true) : enabled_(enabled) {}

  void run(const GemmArgs<T>& g);
  // Contiguous operands, as ws::gemm.
  void run(Op op_a, Op op_b, int m, int n, int k, T alpha, const T* a, const T* b, T beta, T* c);

  // Force a variant for every shape (tests compare variants against each other).
  void force(GemmVariant v) { forced_ = v, has_forced_ = true; }
  const std::map<GemmShape, GemmChoice>& choices() const { return choices_; }
  // Take over earlier choices (a resumed run keeps the variants, so its products round the same).
  void adopt(const std::map<GemmShape, GemmChoice>& choices) { choices_ = choices; }

 private:
  GemmChoice tune(const GemmArgs<T>& g);

  bool enabled_;
  bool has_forced_ = false;
  GemmVariant forced_ = GemmVariant::row_major;
  std::map<GemmShape, GemmChoice> choices_;
  std::vector<T> scratch_;    // transposed operand
  std::vector<T> c_trial_;    // C copy each trial writes, so beta != 0 products stay exact
};

}  // namespace ws
