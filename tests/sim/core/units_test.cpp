#include "sim/core/units.hpp"

#include <gtest/gtest.h>

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
