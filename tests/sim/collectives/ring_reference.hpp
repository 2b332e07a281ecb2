// The stepwise reference driver of ring collectives (all-reduce, reduce-scatter, all-gather): one
// flow per member per step on a FlowNetwork, driven by its own event queue. The simulator prices
// rings through sim/collectives/ring_schedule (phases, merged steps); this is the slow, literal
// model the tests check those against. Step k+1 of a member starts when its step-k receive completes, so
// members drift apart exactly as much as their links make them; many collectives share one network.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workload/collective_op.hpp"
#include "base/units.hpp"
#include "sim/machine/machine.hpp"
#include "sim/net/flow_network.hpp"

namespace ws {

struct RingCall {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::vector<int> devices;  // the communicator: member i sends to member i + 1 (mod p)
  Bytes bytes = 0;           // all-reduce: buffer; reduce-scatter: input; all-gather: output (per member)
  Time start;
};

struct CollectiveResult {
  Time start;
  Time end;  // the last member's last receive
  std::uint64_t flows = 0;
};

// Ring steps: 2(p - 1) for all-reduce, p - 1 for the others; each moves one chunk of bytes / p
// (the first bytes % p chunks one byte larger).
// Runs all calls to completion together on `network` (its time must not be past any call's start).
// Time per step: library step latency + path latency + chunk / max-min share of a sprayed message
// with `valiant_share` of its bytes on Valiant paths; plus the library launch latency once per call.
std::vector<CollectiveResult> run_ring_collectives(FlowNetwork& network, std::span<const RingCall> calls,
                                                   const CollectiveLibrary& library, double valiant_share = 0.0);

}  // namespace ws
