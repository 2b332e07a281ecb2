// Ring collectives with their steps coalesced: the fast, approximate twin of run_ring_collectives
// for large jobs, where one flow per member per step (devices x 2(p - 1) flows) is too many.
#pragma once

#include <span>
#include <vector>

#include "sim/collectives/ring.hpp"

namespace ws {

// Same calls, same result type as run_ring_collectives, but a call's ring runs as one lockstep flow
// group (FlowNetwork::start_flow_group): member i sends all its steps' bytes to member i + 1 as one
// transfer, all members at one shared rate (the ring's max-min share: it advances at its slowest
// member's pace, as a ring pipeline does), and the per-step latencies are added in closed form: the
// last receive over member i's link ends a chain through the `steps` members up to i, each adding
// a step latency and its path latency. Exact when every member of the stepwise ring gets the same
// share for the whole call (lockstep rings, e.g. the closed form of the non-blocking ring);
// otherwise an approximation whose measured error against the stepwise model is in
// sim/net/README.md. results[c].flows counts member flows (p x paths_per_member per call and segment).
struct RingCoalescing {
  // The steps of a call are split into this many consecutive segments, each one flow group started
  // when the previous one is received (and routed afresh: adaptive routing gets a new choice). 1 is
  // the fastest; ring_steps() reproduces the stepwise ring's schedule with coupled members.
  int segments = 1;
  // Each member's transfer is split evenly over this many flows of the group, each routed on its
  // own (adaptive routing spreads them as it spreads a stepwise ring's successive steps, and as
  // Slingshot spreads packets). The member's latency is its slowest path's.
  int paths_per_member = 1;
};
std::vector<CollectiveResult> run_ring_collectives_coalesced(FlowNetwork& network, std::span<const CollectiveCall> calls,
                                                             const CollectiveLibrary& library, RingCoalescing options = {});

}  // namespace ws
