// Row-major dense matrix products through OpenBLAS CBLAS, for float and double (double exists so
// that gradient checks can run the very same code in higher precision).
#pragma once

#include <vector>

namespace ws {

enum class Op { n, t };  // use the operand as stored, or its transpose

// Ways to compute C = alpha op(A) op(B) + beta C that give the same result but may run at
// different speeds (../shared/docs/4d-algorithm.md, "GEMM layout tuning").
enum class GemmVariant {
  row_major,       // one row-major BLAS call
  swapped,         // C^T = op(B)^T op(A)^T as a column-major call: the (B^T A^T)^T form
  transposed_b,    // materialise B transposed, then flip B's flag (changes BLAS's packing path)
};
inline constexpr GemmVariant kGemmVariants[] = {GemmVariant::row_major, GemmVariant::swapped,
                                                GemmVariant::transposed_b};
const char* to_string(GemmVariant v);

// Row-major operands: op(A) is m x k, op(B) is k x n, C is m x n; leading dimensions in elements.
template <class T>
struct GemmArgs {
  Op op_a = Op::n, op_b = Op::n;
  int m = 0, n = 0, k = 0;
  T alpha = 1;
  const T* a = nullptr;
  int lda = 0;
  const T* b = nullptr;
  int ldb = 0;
  T beta = 0;
  T* c = nullptr;
  int ldc = 0;
};

// The plain row-major call.
template <class T>
void gemm(const GemmArgs<T>& g);

// Convenience for contiguous operands (leading dimensions follow from the shapes).
template <class T>
void gemm(Op op_a, Op op_b, int m, int n, int k, T alpha, const T* a, const T* b, T beta, T* c);

// One specific variant; `scratch` is reused storage for the transposed_b copy.
template <class T>
void gemm_variant(GemmVariant v, const GemmArgs<T>& g, std::vector<T>& scratch);

}  // namespace ws
