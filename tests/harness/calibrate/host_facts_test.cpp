// The fp32 peak basis read from /proc/cpuinfo text: ISA, lanes, FMA and clock.
#include "harness/calibrate/host_facts.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

TEST(HostFacts, Avx2FmaCoreIs32FlopsPerCycle) {
  HostFacts f;
  apply_cpuinfo("model name\t: AMD EPYC\ncpu MHz\t\t: 2445.428\nflags\t\t: fpu sse sse2 fma avx avx2\n", f);
  EXPECT_EQ(f.cpu_model, "AMD EPYC");
  EXPECT_EQ(f.vector_isa, "avx2+fma");
  EXPECT_EQ(f.fp32_flops_per_cycle(), 32.0);  // 8 lanes x 2 (FMA) x 2 units
  EXPECT_DOUBLE_EQ(f.fp32_peak_flops(), 2445.428e6 * 32.0);
}

TEST(HostFacts, Avx512CoreIs64FlopsPerCycle) {
  HostFacts f;
  apply_cpuinfo("flags\t\t: sse avx avx2 fma avx512f avx512bw\n", f);
  EXPECT_EQ(f.vector_isa, "avx512f");
  EXPECT_EQ(f.fp32_flops_per_cycle(), 64.0);
  EXPECT_EQ(f.fp32_peak_flops(), 0.0);  // no clock: the caller falls back to the measured rate
}

TEST(HostFacts, CoreWithoutFmaCountsOneMultiplyAndOneAdd) {
  HostFacts f;
  apply_cpuinfo("flags\t\t: sse sse2\n", f);
  EXPECT_EQ(f.vector_isa, "sse");
  EXPECT_EQ(f.fp32_flops_per_cycle(), 8.0);  // 4 lanes x (1 mul + 1 add)
}

TEST(HostFacts, CpufreqClockIsKept) {
  HostFacts f;
  f.clock_hz = 3.5e9;
  f.clock_source = "cpufreq";
  apply_cpuinfo("cpu MHz\t\t: 1200.0\nflags\t\t: avx2 fma\n", f);
  EXPECT_EQ(f.clock_hz, 3.5e9);
}

// A calibrated file describes one host and boot: anything else is named in the reason, and the
// same host and boot give none.
TEST(HostFacts, AnotherHostOrBootIsNamedAndTheSameOneIsNot) {
  const MeasuredHost here{"vm", "m1", "boot-2", "AMD EPYC", 2};
  EXPECT_EQ(other_host_reason(here, here), "");
  EXPECT_NE(other_host_reason(std::nullopt, here).find("does not say which host"), std::string::npos);
  MeasuredHost other = here;
  other.hostname = "laptop";
  EXPECT_NE(other_host_reason(other, here).find("measured on host 'laptop', this is 'vm'"), std::string::npos);
  other = here;
  other.machine_id = "m0";  // clones of one VM image share a host name
  EXPECT_NE(other_host_reason(other, here).find("measured on host"), std::string::npos);
  other = here;
  other.cores = 16;
  EXPECT_NE(other_host_reason(other, here).find("16 cores, this host has 2"), std::string::npos);
  other = here;
  other.boot_id = "boot-1";
  EXPECT_NE(other_host_reason(other, here).find("rebooted"), std::string::npos);
}

}  // namespace
}  // namespace ws
