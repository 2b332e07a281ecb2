#include "base/units.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace ws {
namespace {
using namespace ws::literals;

TEST(Time, LiteralsAgreeAcrossUnits) {
  EXPECT_EQ(1_us, 1000_ns);
  EXPECT_EQ(1_ms, 1000_us);
  EXPECT_EQ(1_s, 1000_ms);
  EXPECT_EQ((1_ns).ps(), 1000);
}

TEST(Time, ArithmeticIsExactInPicoseconds) {
  Time t = 350_ns + 2_us;
  EXPECT_EQ(t.ps(), 2'350'000);
  EXPECT_DOUBLE_EQ(t.us(), 2.35);
  EXPECT_EQ(t * 2, 700_ns + 4_us);
  EXPECT_EQ(scale(1_us, 0.5), 500_ns);
}

// Past int64 picoseconds (~106 days) a time saturates at max (or -max) instead of wrapping to
// the other sign: an overflowed step sorts last, never first.
TEST(Time, SaturatesInsteadOfWrapping) {
  const Time big = Time::from_seconds(9e6);  // 104 days: representable
  EXPECT_FALSE(big.saturated());
  EXPECT_EQ(big + big, Time::max());
  EXPECT_TRUE((big + big).saturated());
  EXPECT_EQ(big * 3, Time::max());
  EXPECT_EQ(big * -3, Time::zero() - Time::max());
  EXPECT_EQ(Time::zero() - big - big, Time::zero() - Time::max());
  EXPECT_EQ(Time::max() + 1_ps, Time::max());
  EXPECT_EQ(Time::from_seconds(1e30), Time::max());
  EXPECT_EQ(Time::from_seconds(-1e30), Time::zero() - Time::max());
  EXPECT_EQ(Time::from_seconds(std::numeric_limits<double>::infinity()), Time::max());
  EXPECT_EQ(Time::from_seconds(std::numeric_limits<double>::quiet_NaN()), Time::max());
  // The case: 1 TB over a link typed as 300 B/s is 105 years, not a negative time.
  EXPECT_EQ(transfer_time(1e12, Bandwidth::from_bytes_per_s(300)), Time::max());
  EXPECT_GT(transfer_time(1e9, Bandwidth::from_bytes_per_s(1e-300)), Time::zero());
  Time sum = big;
  sum += big;
  EXPECT_EQ(sum, Time::max());
}

TEST(TransferTime, BytesOverBandwidth) {
  // 25 GB/s moves 25e9 bytes in one second and 1 MB in 40 us.
  EXPECT_EQ(transfer_time(25e9, 25_GBps), 1_s);
  EXPECT_EQ(transfer_time(1e6, 25_GBps), 40_us);
}

TEST(ComputeTime, FlopsOverRate) {
  EXPECT_EQ(compute_time(2e12, FlopRate::from_tflops(1)), 2_s);
}

}  // namespace
}  // namespace ws
