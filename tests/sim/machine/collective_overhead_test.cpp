// The per-step overheads a collective library pays beyond its step latency: the eager-overflow
// window (by message size, any job) and the large-job table (by node count and size).
#include "sim/machine/machine.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ws {
namespace {

using namespace ws::literals;

CollectiveLibrary eager_rccl() {
  CollectiveLibrary lib{"rccl-eager", 20_us, 39_us, 0.72};
  lib.eager_overflow = EagerOverflow{64_KiB, 256_KiB, 310_us};
  return lib;
}

TEST(EagerOverflow, OnlyStepsInsideTheWindowPay) {
  const CollectiveLibrary lib = eager_rccl();
  EXPECT_EQ(eager_step_overhead(lib, 64.0 * 1024), Time::zero());        // the lower bound is open
  EXPECT_EQ(eager_step_overhead(lib, 64.0 * 1024 + 1), 310_us);
  EXPECT_EQ(eager_step_overhead(lib, 256.0 * 1024), 310_us);             // the upper bound is closed
  EXPECT_EQ(eager_step_overhead(lib, 256.0 * 1024 + 1), Time::zero());
  EXPECT_EQ(eager_step_overhead(CollectiveLibrary{"rccl", 20_us, 27_us, 0.79}, 128.0 * 1024), Time::zero());
}

TEST(LargeJobOverhead, IsInverseInBytesAndLogLogInNodes) {
  CollectiveLibrary lib = eager_rccl();
  lib.large_job_overhead.ops = {CollectiveOp::all_gather};
  lib.large_job_overhead.points = {{64, 11_us, 2_MiB}, {128, 44_us, 1_MiB}};
  const auto op = CollectiveOp::all_gather;
  EXPECT_EQ(large_job_step_overhead(lib, op, 32, 2.0 * 1024 * 1024), Time::zero());  // below the first point
  EXPECT_EQ(large_job_step_overhead(lib, op, 64, 2.0 * 1024 * 1024), 11_us);
  EXPECT_EQ(large_job_step_overhead(lib, op, 64, 1.0 * 1024 * 1024), 22_us);         // half the bytes: twice the time
  EXPECT_EQ(large_job_step_overhead(lib, op, 128, 1.0 * 1024 * 1024), 44_us);
  EXPECT_EQ(large_job_step_overhead(lib, op, 512, 1.0 * 1024 * 1024), 44_us);        // the last point beyond it
  // Halfway in log nodes between 22 us x MiB and 44 us x MiB: their geometric mean.
  EXPECT_NEAR(large_job_step_overhead(lib, op, 91, 1.0 * 1024 * 1024).us(), 22.0 * std::pow(2.0, std::log2(91.0 / 64)), 1e-3);
  EXPECT_EQ(large_job_step_overhead(lib, CollectiveOp::all_reduce, 128, 1.0 * 1024 * 1024), Time::zero());  // op not listed
}

}  // namespace
}  // namespace ws
