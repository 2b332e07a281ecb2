#include "engine/kernels/gemm.hpp"

#include <cblas.h>

#include <cassert>

namespace ws {

namespace {

CBLAS_TRANSPOSE to_cblas(Op op) { return op == Op::n ? CblasNoTrans : CblasTrans; }
Op flip(Op op) { return op == Op::n ? Op::t : Op::n; }

void call_blas(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
               const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void call_blas(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
               const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

const char* to_string(GemmVariant v) {
  switch (v) {
    case GemmVariant::row_major: return "row_major";
    case GemmVariant::swapped: return "swapped";
    case GemmVariant::transposed_b: return "transposed_b";
  }
  return "?";
}

template <class T>
void gemm(const GemmArgs<T>& g) {
  if (g.m == 0 || g.n == 0) return;
  call_blas(CblasRowMajor, to_cblas(g.op_a), to_cblas(g.op_b), g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb,
            g.beta, g.c, g.ldc);
}

template <class T>
void gemm(Op op_a, Op op_b, int m, int n, int k, T alpha, const T* a, const T* b, T beta, T* c) {
  gemm(GemmArgs<T>{op_a, op_b, m, n, k, alpha, a, op_a == Op::n ? k : m, b, op_b == Op::n ? n : k, beta, c, n});
}

template <class T>
void gemm_variant(GemmVariant v, const GemmArgs<T>& g, std::vector<T>& scratch) {
  if (g.m == 0 || g.n == 0) return;
  switch (v) {
    case GemmVariant::row_major:
      gemm(g);
      return;
    case GemmVariant::swapped:
      // Row-major C (m x n) is column-major C^T (n x m) = op(B)^T op(A)^T, whose column-major
      // operands are B and A exactly as stored.
      call_blas(CblasColMajor, to_cblas(g.op_b), to_cblas(g.op_a), g.n, g.m, g.k, g.alpha, g.b, g.ldb, g.a,
                g.lda, g.beta, g.c, g.ldc);
      return;
    case GemmVariant::transposed_b: {
      // Stored B is rows x cols; write its transpose contiguously and flip the flag.
      const int rows = g.op_b == Op::n ? g.k : g.n;
      const int cols = g.op_b == Op::n ? g.n : g.k;
      scratch.resize(static_cast<std::size_t>(rows) * cols);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
          scratch[static_cast<std::size_t>(j) * rows + i] = g.b[static_cast<std::size_t>(i) * g.ldb + j];
      GemmArgs<T> h = g;
      h.op_b = flip(g.op_b);
      h.b = scratch.data();
      h.ldb = rows;
      gemm(h);
      return;
    }
  }
  assert(false && "unknown GemmVariant");
}

#define WS_INSTANTIATE(T)                                                                              \
  template void gemm<T>(const GemmArgs<T>&);                                                           \
  template void gemm<T>(Op, Op, int, int, int, T, const T*, const T*, T, T*);                          \
  template void gemm_variant<T>(GemmVariant, const GemmArgs<T>&, std::vector<T>&);
WS_INSTANTIATE(float)
WS_INSTANTIATE(double)
#undef WS_INSTANTIATE

}  // namespace ws
