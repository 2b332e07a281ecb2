#include "base/quantity.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {
using namespace ws::literals;

TEST(ParseTime, AcceptsEveryUnit) {
  EXPECT_EQ(parse_time("350 ns"), 350_ns);
  EXPECT_EQ(parse_time("2.5us"), Time::from_ns(2500));
  EXPECT_EQ(parse_time("1 ms"), 1_ms);
  EXPECT_EQ(parse_time("1 s"), 1_s);
  EXPECT_EQ(parse_time("7 ps"), 7_ps);
}

TEST(ParseTime, RejectsMissingOrUnknownUnits) {
  EXPECT_FALSE(parse_time("350"));
  EXPECT_FALSE(parse_time("350 minutes"));
  EXPECT_FALSE(parse_time("ns"));
  EXPECT_FALSE(parse_time(""));
}

TEST(ParseQuantities, RejectNonFiniteNumbers) {
  for (const char* text : {"inf GB/s", "nan GB/s", "-inf GB/s", "infinity GB/s"}) EXPECT_FALSE(parse_bandwidth(text)) << text;
  for (const char* text : {"inf s", "nan us"}) EXPECT_FALSE(parse_time(text)) << text;
  EXPECT_FALSE(parse_bytes("inf GiB"));
  EXPECT_FALSE(parse_flop_rate("nan TFLOP/s"));
  EXPECT_FALSE(parse_bandwidth("1e400 GB/s"));  // out of double's range
  EXPECT_FALSE(parse_bytes("1e307 TB"));          // finite number, infinite product (found by fuzzing)
  EXPECT_FALSE(parse_flop_rate("1e300 PFLOP/s"));
}

TEST(ParseBandwidth, DecimalBinaryAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("25 GB/s")->bytes_per_s(), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200 Gb/s")->bytes_per_s(), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 GiB/s")->bytes_per_s(), 1073741824.0);
  EXPECT_FALSE(parse_bandwidth("25"));
  EXPECT_FALSE(parse_bandwidth("25 GB"));
}

TEST(ParseBandwidth, KeepsSignForTheCallerToReject) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("-3 GB/s")->bytes_per_s(), -3e9);
}

TEST(ParseBytes, DecimalAndBinary) {
  EXPECT_DOUBLE_EQ(*parse_bytes("64 GiB"), 64.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_bytes("64 GB"), 64e9);
  EXPECT_DOUBLE_EQ(*parse_bytes("8 B"), 8.0);
  // The collective command's range ends at 1 PB, so its unit must parse (it did not).
  EXPECT_DOUBLE_EQ(*parse_bytes("1PB"), 1e15);
  EXPECT_DOUBLE_EQ(*parse_bytes("2 PiB"), 2.0 * 1024 * 1024 * 1024 * 1024 * 1024);
  EXPECT_FALSE(parse_bytes("64"));
}

TEST(ParseFlopRate, Tera) {
  EXPECT_DOUBLE_EQ(parse_flop_rate("191.5 TFLOP/s")->flops(), 191.5e12);
  EXPECT_FALSE(parse_flop_rate("191.5 TF"));
}

}  // namespace
}  // namespace ws
