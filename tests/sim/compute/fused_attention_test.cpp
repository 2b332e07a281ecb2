// The fused attention kernel's time in closed form, and its absence where the machine gives no rate.
#include "sim/compute/fused_attention.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

DeviceSpec device_with(std::optional<FusedAttention> fused) {
  DeviceSpec device;
  device.peak_bf16 = FlopRate::from_tflops(1000);
  device.peak_fp32 = FlopRate::from_tflops(50);
  device.fused_attention = fused;
  return device;
}

TEST(FusedAttention, FlopsAreHalfTheScoreGemmsForwardAndTwoAndAHalfTimesThatBackward) {
  // Q K^T and P V each do 2 s^2 d; causal attention needs half of their 4 s^2 d.
  EXPECT_DOUBLE_EQ(causal_attention_flops(2048, 128, AttentionPass::forward), 2.0 * 2048 * 2048 * 128);
  EXPECT_DOUBLE_EQ(causal_attention_flops(2048, 128, AttentionPass::backward), 2.5 * 2.0 * 2048 * 2048 * 128);
}

TEST(FusedAttention, TimeIsCausalFlopsOverTheRateOfItsPass) {
  const DeviceSpec device = device_with(FusedAttention{0.5, 0.25});
  const double calls = 40;
  const double forward = calls * 2.0 * 2048 * 2048 * 128;
  EXPECT_EQ(*fused_attention_time(device, Precision::bf16, 2048, 128, calls, AttentionPass::forward),
            Time::from_seconds(forward / (0.5 * 1000e12)));
  EXPECT_EQ(*fused_attention_time(device, Precision::bf16, 2048, 128, calls, AttentionPass::backward),
            Time::from_seconds(2.5 * forward / (0.25 * 1000e12)));
  // The precision picks the peak.
  EXPECT_EQ(*fused_attention_time(device, Precision::fp32, 2048, 128, calls, AttentionPass::forward),
            Time::from_seconds(forward / (0.5 * 50e12)));
}

TEST(FusedAttention, NoRateMeansTheEngineAttentionIsPriced) {
  EXPECT_FALSE(fused_attention_time(device_with(std::nullopt), Precision::bf16, 2048, 128, 1, AttentionPass::forward));
}

}  // namespace
}  // namespace ws
