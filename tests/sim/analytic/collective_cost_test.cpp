#include "sim/analytic/collective_cost.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace ws {
namespace {

using namespace ws::literals;

// The closed forms the terms stand for, as times: the oracle collective_terms is checked against.
Time ring_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                          Time step_latency) {
  if (ranks <= 1) return Time::zero();
  const std::int64_t steps = ranks - 1;
  const double p = static_cast<double>(ranks);
  const double wire_bytes = (p - 1.0) / p * full_bytes;
  const Time one_pass = steps * step_latency + transfer_time(wire_bytes, bandwidth);
  return op == CollectiveOp::all_reduce ? 2 * one_pass : one_pass;
}

Time binomial_collective_time(CollectiveOp op, int ranks, double full_bytes, Bandwidth bandwidth,
                              Time step_latency) {
  if (ranks <= 1) return Time::zero();
  if (op == CollectiveOp::all_gather) return ring_collective_time(op, ranks, full_bytes, bandwidth, step_latency);
  const auto terms = collective_terms(op, ranks, full_bytes, true);
  const auto height = static_cast<std::int64_t>(op == CollectiveOp::all_reduce ? terms.steps / 2 : terms.steps - 1);
  const Time whole = step_latency + transfer_time(full_bytes, bandwidth);
  if (op == CollectiveOp::all_reduce) return 2 * height * whole;
  const double p = static_cast<double>(ranks);
  return height * whole + step_latency + transfer_time((p - 1.0) / p * full_bytes, bandwidth);
}

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

// Open MPI's non-blocking reductions: whole-buffer transfers up and down a binomial tree.
TEST(CollectiveCost, BinomialMatchesItsClosedForm) {
  const double M = 12e6;
  const double bw = 3e9, alpha = 700e-9;
  // p = 2: height 1. p = 6: height 3.
  EXPECT_NEAR(binomial_collective_time(CollectiveOp::all_reduce, 2, M, 3_GBps, 700_ns).seconds(),
              2 * (alpha + M / bw), 1e-9);
  EXPECT_NEAR(binomial_collective_time(CollectiveOp::all_reduce, 6, M, 3_GBps, 700_ns).seconds(),
              6 * (alpha + M / bw), 1e-9);
  EXPECT_NEAR(binomial_collective_time(CollectiveOp::reduce_scatter, 6, M, 3_GBps, 700_ns).seconds(),
              3 * (alpha + M / bw) + alpha + 5.0 / 6.0 * M / bw, 1e-9);
  EXPECT_EQ(binomial_collective_time(CollectiveOp::all_gather, 6, M, 3_GBps, 700_ns),
            ring_collective_time(CollectiveOp::all_gather, 6, M, 3_GBps, 700_ns));
  EXPECT_EQ(binomial_collective_time(CollectiveOp::all_reduce, 1, M, 3_GBps, 700_ns), Time::zero());
}

// The terms the calibration fits with are the times the simulator charges (to a picosecond).
TEST(CollectiveCost, TermsAgreeWithTheTimes) {
  for (const bool binomial : {false, true}) {
    for (const auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
      for (const int p : {2, 3, 4, 7, 16}) {
        const double M = 48e6;
        const auto terms = collective_terms(op, p, M, binomial);
        const Time t = binomial ? binomial_collective_time(op, p, M, 3_GBps, 700_ns)
                                : ring_collective_time(op, p, M, 3_GBps, 700_ns);
        EXPECT_NEAR(t.seconds(), terms.steps * 700e-9 + terms.wire_bytes / 3e9, 1e-11) << binomial << " " << p;
      }
    }
  }
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
