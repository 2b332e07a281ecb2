#include "engine/kernels/attention.hpp"

#include <algorithm>
#include <cmath>

#include "engine/kernels/gemm.hpp"

namespace ws {

namespace {

// Offsets of one (sequence, head) block inside the row-major qkv / out matrices.
struct HeadView {
  std::size_t q, k, v, o;
};
HeadView view(const AttentionShape& s, int sequence, int head) {
  const std::size_t w = static_cast<std::size_t>(s.width()), d = static_cast<std::size_t>(s.head_dim);
  const std::size_t row = static_cast<std::size_t>(sequence) * s.seq;
  const std::size_t start = row * static_cast<std::size_t>(s.qkv_stride()), out = row * w + head * d;
  if (!s.grouped) {
    const std::size_t col = static_cast<std::size_t>(head) * d;
    return {start + col, start + w + col, start + 2 * w + col, out};
  }
  const std::size_t r = static_cast<std::size_t>(s.queries_per_group()), group = static_cast<std::size_t>(head) / r;
  const std::size_t first = start + group * (r + 2) * d;
  return {first + (static_cast<std::size_t>(head) % r) * d, first + r * d, first + (r + 1) * d, out};
}

}  // namespace

template <class T>
void attention_forward(const AttentionShape& s, const T* qkv, T* out, T* probs) {
  const int n = s.seq, d = s.head_dim, w = s.width(), q = s.qkv_stride();
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  for (int b = 0; b < s.sequences; ++b)
    for (int h = 0; h < s.heads; ++h) {
      const HeadView hv = view(s, b, h);
      T* p = probs + (static_cast<std::size_t>(b) * s.heads + h) * n * n;
      // Scores over the full square (BLAS has no triangular-output GEMM); masked below.
      gemm(GemmArgs<T>{Op::n, Op::t, n, n, d, scale, qkv + hv.q, q, qkv + hv.k, q, T(0), p, n});
      for (int i = 0; i < n; ++i) {
        T* row = p + static_cast<std::size_t>(i) * n;
        const T max = *std::max_element(row, row + i + 1);
        T sum = 0;
        for (int j = 0; j <= i; ++j) sum += (row[j] = std::exp(row[j] - max));
        for (int j = 0; j <= i; ++j) row[j] /= sum;
        std::fill(row + i + 1, row + n, T(0));
      }
      gemm(GemmArgs<T>{Op::n, Op::n, n, d, n, T(1), p, n, qkv + hv.v, q, T(0), out + hv.o, w});
    }
}

template <class T>
void attention_backward(const AttentionShape& s, const T* qkv, const T* probs, const T* dout, T* dqkv, T* dprobs) {
  const int n = s.seq, d = s.head_dim, w = s.width(), q = s.qkv_stride();
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  for (int b = 0; b < s.sequences; ++b)
    for (int h = 0; h < s.heads; ++h) {
      const HeadView hv = view(s, b, h);
      // A group's query heads share its key and value: their gradients add up over the group.
      const T shared = h % s.queries_per_group() == 0 ? T(0) : T(1);
      const T* p = probs + (static_cast<std::size_t>(b) * s.heads + h) * n * n;
      // dP = dO V^T ; dV = P^T dO
      gemm(GemmArgs<T>{Op::n, Op::t, n, n, d, T(1), dout + hv.o, w, qkv + hv.v, q, T(0), dprobs, n});
      gemm(GemmArgs<T>{Op::t, Op::n, n, d, n, T(1), p, n, dout + hv.o, w, shared, dqkv + hv.v, q});
      // Softmax backward, row by row: dS = P * (dP - sum_j P dP). Masked entries have P = 0.
      for (int i = 0; i < n; ++i) {
        const T* pr = p + static_cast<std::size_t>(i) * n;
        T* dr = dprobs + static_cast<std::size_t>(i) * n;
        T dot = 0;
        for (int j = 0; j <= i; ++j) dot += pr[j] * dr[j];
        for (int j = 0; j < n; ++j) dr[j] = j <= i ? pr[j] * (dr[j] - dot) : T(0);
      }
      // dQ = scale dS K ; dK = scale dS^T Q
      gemm(GemmArgs<T>{Op::n, Op::n, n, d, n, scale, dprobs, n, qkv + hv.k, q, T(0), dqkv + hv.q, q});
      gemm(GemmArgs<T>{Op::t, Op::n, n, d, n, scale, dprobs, n, qkv + hv.q, q, shared, dqkv + hv.k, q});
    }
}

template void attention_forward<float>(const AttentionShape&, const float*, float*, float*);
template void attention_forward<double>(const AttentionShape&, const double*, double*, double*);
template void attention_backward<float>(const AttentionShape&, const float*, const float*, const float*, float*,
                                        float*);
template void attention_backward<double>(const AttentionShape&, const double*, const double*, const double*,
                                         double*, double*);

}  // namespace ws
