#include "sim/analytic/collective_cost.hpp"

#include <gtest/gtest.h>

namespace ws {
namespace {

using namespace ws::literals;

TEST(CollectiveCost, OneRankIsFree) {
  for (auto op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::all_reduce}) {
    EXPECT_EQ(ring_collective_time(op, 1, 1e9, 1_GBps, 1_us), Time::zero());
  }
}

TEST(CollectiveCost, AllGatherAndReduceScatterClosedForm) {
  // p = 4, M = 4e6 B, bw = 1 GB/s, alpha = 1 us: 3 * 1 us + 3/4 * 4e6 / 1e9 s = 3 us + 3 ms.
  const Time expected = Time::from_ps(3'000'000 + 3'000'000'000LL);
  EXPECT_EQ(ring_collective_time(CollectiveOp::all_gather, 4, 4e6, 1_GBps, 1_us), expected);
  EXPECT_EQ(ring_collective_time(CollectiveOp::reduce_scatter, 4, 4e6, 1_GBps, 1_us), expected);
}

TEST(CollectiveCost, AllReduceClosedForm) {
  // p = 8, M = 8e6 B, bw = 2 GB/s, alpha = 2 us: 2*7*2 us + 2 * 7/8 * 8e6 / 2e9 s = 28 us + 7 ms.
  EXPECT_EQ(ring_collective_time(CollectiveOp::all_reduce, 8, 8e6, 2_GBps, 2_us),
            Time::from_ps(28'000'000 + 7'000'000'000LL));
}

TEST(CollectiveCost, AllReduceIsReduceScatterPlusAllGather) {
  const Time rs = ring_collective_time(CollectiveOp::reduce_scatter, 6, 12e6, 3_GBps, 700_ns);
  const Time ag = ring_collective_time(CollectiveOp::all_gather, 6, 12e6, 3_GBps, 700_ns);
  EXPECT_EQ(ring_collective_time(CollectiveOp::all_reduce, 6, 12e6, 3_GBps, 700_ns), rs + ag);
}

TEST(CollectiveCost, MoreBandwidthNeverSlower) {
  Time previous = Time::max();
  for (double gbps : {1.0, 2.0, 5.0, 10.0, 100.0}) {
    const Time t = ring_collective_time(CollectiveOp::all_reduce, 16, 1e8, Bandwidth::from_gbps(gbps), 1_us);
    EXPECT_LE(t, previous);
    previous = t;
  }
}

}  // namespace
}  // namespace ws
