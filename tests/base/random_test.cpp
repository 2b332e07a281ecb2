// Properties of the seeded streams: reproducible, independent per component, sane distributions.
#include "base/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace ws {
namespace {

TEST(RandomStream, SameSeedAndComponentGiveSameSequence) {
  RandomStream a(123, 5), b(123, 5);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(RandomStream, KnownFirstValueIsStableAcrossPlatforms) {
  // mt19937_64 is specified exactly by the standard; our derivation is ours: pin both.
  EXPECT_EQ(derive_seed(0, 0), derive_seed(0, 0));
  std::mt19937_64 e(derive_seed(1, 2));
  RandomStream s(1, 2);
  EXPECT_EQ(s.next_u64(), e());
}

TEST(SplitMix64, StreamsArePinned) {
  // The engine's initial weights and synthetic tokens come from these streams: a changed value
  // changes every training run. Values from an independent implementation of Steele et al.'s
  // splitmix64 with the stream seeding seed ^ (golden * (stream + 1)), first output discarded.
  SplitMix64 s(1, 2);
  EXPECT_EQ(s.next(), 0xb4a0472e578069aeULL);
  EXPECT_EQ(s.next(), 0xd31dadbda438bb33ULL);
  EXPECT_EQ(s.next(), 0xf14f2cf802083fa5ULL);
}

TEST(SplitMix64, NormalHasUnitVarianceAndZeroMean) {
  SplitMix64 s(7, 0);
  const int n = 200000;
  double sum = 0, square = 0;
  for (int i = 0; i < n; ++i) {
    const double x = s.normal();
    sum += x;
    square += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(square / n, 1.0, 0.01);
}

TEST(RandomStream, ComponentsAreIndependent) {
  // Streams of different components (and of different seeds) share no prefix and are uncorrelated.
  RandomStream a(99, StreamId::placement), b(99, StreamId::routing), c(100, StreamId::placement);
  const int n = 20000;
  double sab = 0, sa = 0, sb = 0, saa = 0, sbb = 0;
  int equal_ac = 0;
  for (int i = 0; i < n; ++i) {
    const double x = a.uniform01(), y = b.uniform01();
    if (x == c.uniform01()) ++equal_ac;
    sab += x * y; sa += x; sb += y; saa += x * x; sbb += y * y;
  }
  const double cov = sab / n - (sa / n) * (sb / n);
  const double corr = cov / std::sqrt((saa / n - sa * sa / n / n) * (sbb / n - sb * sb / n / n));
  EXPECT_LT(std::abs(corr), 0.03);
  EXPECT_LT(equal_ac, 2);
}

TEST(RandomStream, UniformBelowIsInRangeAndRoughlyFlat) {
  RandomStream r(1, StreamId::test);
  std::vector<int> counts(7, 0);
  const int n = 70000;
  for (int i = 0; i < n; ++i) {
    const auto v = r.uniform_below(7);
    ASSERT_LT(v, 7u);
    ++counts[static_cast<std::size_t>(v)];
  }
  for (const int c : counts) EXPECT_NEAR(c, n / 7, 500);
}

TEST(RandomStream, NormalHasRequestedMoments) {
  RandomStream r(3, StreamId::test);
  const int n = 100000;
  double s = 0, ss = 0;
  for (int i = 0; i < n; ++i) {
    const double v = r.normal(2.0, 0.5);
    s += v; ss += v * v;
  }
  const double mean = s / n;
  EXPECT_NEAR(mean, 2.0, 0.01);
  EXPECT_NEAR(std::sqrt(ss / n - mean * mean), 0.5, 0.01);
}

TEST(RandomStream, ShuffleIsAPermutation) {
  RandomStream r(5, StreamId::test);
  std::vector<int> v(100);
  std::iota(v.begin(), v.end(), 0);
  r.shuffle(std::span<int>(v));
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);
}

}  // namespace
}  // namespace ws
