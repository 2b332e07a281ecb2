// GEMM variants against a naive triple loop, and the tuner's choice against every variant.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/kernels/gemm.hpp"
#include "engine/kernels/gemm_tuner.hpp"

namespace ws {
namespace {

std::vector<float> random_matrix(std::size_t size, std::uint64_t seed) {
  std::vector<float> v(size);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(static_cast<double>(seed >> 11) / 9007199254740992.0 - 0.5);
  }
  return v;
}

// C = alpha op(A) op(B) + beta C, row-major, in double.
std::vector<float> naive(const GemmArgs<float>& g) {
  std::vector<float> c(static_cast<std::size_t>(g.m) * g.ldc);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int p = 0; p < g.k; ++p) {
        const double a = g.op_a == Op::n ? g.a[i * g.lda + p] : g.a[p * g.lda + i];
        const double b = g.op_b == Op::n ? g.b[p * g.ldb + j] : g.b[j * g.ldb + p];
        sum += a * b;
      }
      c[static_cast<std::size_t>(i) * g.ldc + j] =
          static_cast<float>(g.alpha * sum + g.beta * static_cast<double>(g.c[i * g.ldc + j]));
    }
  return c;
}

struct Case {
  Op op_a, op_b;
  int m, n, k;
};

std::string name_of(const Case& c) {
  return std::string(c.op_a == Op::n ? "N" : "T") + (c.op_b == Op::n ? "N" : "T") + "_" + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k);
}
void PrintTo(const Case& c, std::ostream* out) { *out << name_of(c); }

class GemmVariants : public ::testing::TestWithParam<Case> {};

TEST_P(GemmVariants, EveryVariantMatchesNaiveLoop) {
  const Case cs = GetParam();
  // Padded leading dimensions: the kernels must honour them, as attention passes strided heads.
  const int lda = (cs.op_a == Op::n ? cs.k : cs.m) + 3;
  const int ldb = (cs.op_b == Op::n ? cs.n : cs.k) + 2;
  const int ldc = cs.n + 1;
  const auto a = random_matrix(static_cast<std::size_t>(cs.op_a == Op::n ? cs.m : cs.k) * lda, 1);
  const auto b = random_matrix(static_cast<std::size_t>(cs.op_b == Op::n ? cs.k : cs.n) * ldb, 2);
  const auto c0 = random_matrix(static_cast<std::size_t>(cs.m) * ldc, 3);
  std::vector<float> scratch;
  for (GemmVariant v : kGemmVariants) {
    auto c = c0;
    GemmArgs<float> g{cs.op_a, cs.op_b, cs.m, cs.n, cs.k, 0.75f, a.data(), lda, b.data(), ldb, 0.5f, c.data(), ldc};
    const auto want = naive(GemmArgs<float>{g.op_a, g.op_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta,
                                            const_cast<float*>(c0.data()), ldc});
    gemm_variant(v, g, scratch);
    for (int i = 0; i < cs.m; ++i)
      for (int j = 0; j < cs.n; ++j)
        ASSERT_NEAR(c[i * ldc + j], want[i * ldc + j], 1e-5 * (1 + cs.k))
            << to_string(v) << " at " << i << "," << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmVariants,
                         ::testing::Values(Case{Op::n, Op::n, 7, 5, 3}, Case{Op::n, Op::t, 16, 33, 9},
                                           Case{Op::t, Op::n, 12, 4, 20}, Case{Op::t, Op::t, 5, 9, 11},
                                           Case{Op::n, Op::n, 64, 96, 48}, Case{Op::n, Op::t, 1, 1, 1}),
                         [](const ::testing::TestParamInfo<Case>& shape) { return name_of(shape.param); });

TEST(GemmTuner, ChoosesOnceAndAgreesWithEveryVariant) {
  const int m = 48, n = 80, k = 32;
  const auto a = random_matrix(static_cast<std::size_t>(m) * k, 4);
  const auto b = random_matrix(static_cast<std::size_t>(n) * k, 5);
  GemmTuner<float> tuner;
  std::vector<float> tuned(static_cast<std::size_t>(m) * n, 1.0f);
  tuner.run(Op::n, Op::t, m, n, k, 1.0f, a.data(), b.data(), 1.0f, tuned.data());  // beta = 1: C read once
  tuner.run(Op::n, Op::t, m, n, k, 1.0f, a.data(), b.data(), 0.0f, tuned.data());  // same shape: no retune
  ASSERT_EQ(tuner.choices().size(), 1u);
  const GemmChoice choice = tuner.choices().begin()->second;
  EXPECT_GT(choice.baseline_seconds, 0.0);
  EXPECT_LE(choice.best_seconds, choice.baseline_seconds);

  for (GemmVariant v : kGemmVariants) {
    GemmTuner<float> forced;
    forced.force(v);
    std::vector<float> c(static_cast<std::size_t>(m) * n, 1.0f);
    forced.run(Op::n, Op::t, m, n, k, 1.0f, a.data(), b.data(), 0.0f, c.data());
    for (std::size_t i = 0; i < c.size(); ++i)
      ASSERT_NEAR(c[i], tuned[i], 1e-5f * (1.0f + std::fabs(c[i]))) << to_string(v) << " element " << i;
  }
}

TEST(GemmTuner, DisabledTunerTimesNothing) {
  const auto a = random_matrix(16, 6);
  std::vector<float> c(16);
  GemmTuner<float> tuner(false);
  tuner.run(Op::n, Op::n, 4, 4, 4, 1.0f, a.data(), a.data(), 0.0f, c.data());
  EXPECT_TRUE(tuner.choices().empty());
}

}  // namespace
}  // namespace ws
