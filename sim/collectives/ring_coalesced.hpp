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
// sim/net/README.md. results[c].flows counts member transfers (p per call, not p x steps).
std::vector<CollectiveResult> run_ring_collectives_coalesced(FlowNetwork& network, std::span<const CollectiveCall> calls,
                                                             const CollectiveLibrary& library);

}  // namespace ws
