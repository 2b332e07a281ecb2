// Ring collectives as FlowSchedules: the building block the ring, multi-channel ring and
// hierarchical algorithms share. Same sends, sizes and dependencies as the stepwise reference driver
// (tests/sim/collectives/ring_reference.hpp, the oracle the tests check them against).
#pragma once

#include <span>
#include <vector>

#include "sim/collectives/flow_schedule.hpp"
#include "workload/collective_op.hpp"

namespace ws {

// Steps of a ring over `members`: 2(p-1) for an all-reduce, p-1 for reduce-scatter and all-gather.
int ring_steps(CollectiveOp op, int members);

// Bytes of the chunk `member` sends at `step` of a ring of p members over `total` bytes: the
// reduce-scatter phase sends chunk (i - k) mod p, the all-gather phase chunk (i + 1 - k) mod p;
// the first total % p chunks are one byte larger.
Bytes ring_chunk_bytes(CollectiveOp op, Bytes total, int p, int member, int step);
// The sum of ring_chunk_bytes over steps [first, end), in constant time.
Bytes ring_segment_bytes(CollectiveOp op, Bytes total, int p, int member, int first, int end);

// Appends one ring over `members` (member indices of `schedule`, in ring order: position j sends
// to position j + 1). The first send of position j waits for the sends entry[j] (empty span: no
// entry dependencies). With max_segments > 0 and more steps than that, consecutive
// steps are merged into max_segments sends per position (their bytes summed, their latencies kept
// as merged steps): exact for lockstep rings, an approximation otherwise. Returns, per position,
// the id of the send that delivers its last receive (-1 for a ring of one).
std::vector<int> append_ring(FlowSchedule& schedule, CollectiveOp op, std::span<const int> members, Bytes bytes,
                             std::span<const std::vector<int>> entry = {}, int max_segments = 0);

struct RingOptions {
  int devices_per_node = 1;
  // Rings run in parallel over channels, each with bytes / channels (NCCL's channels), when every
  // node of the communicator has the same number L >= 2 of members. Channel c leaves each node
  // through the member at position c L / channels of the node's order and alternates direction
  // (odd channels run the ring backwards), so the channels use different devices, hence NICs, at
  // node boundaries and opposite directions of the intra-node links. Otherwise one ring.
  int channels = 1;
  int max_segments = 0;  // see append_ring
  // Order of a full node's local devices in every ring (intra_node_ring_order); empty, or a node
  // with fewer members than devices: the communicator's order.
  std::vector<int> node_order;
};

// The Hamiltonian cycle through a node's devices with the widest narrowest direct link (ties: the
// largest total bandwidth), as NCCL's ring search prefers; pairs without a direct link count as 0.
// Exhaustive up to 9 devices; identity order above.
std::vector<int> intra_node_ring_order(const NodeSpec& node);

// The ring algorithm over `devices` in their order (member i sends to member i + 1).
FlowSchedule ring_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes, const RingOptions& options);

// Members grouped by node in order of first appearance: nodes[k] lists member indices on the k-th
// node. Used by the multi-channel ring and the hierarchical algorithm.
std::vector<std::vector<int>> members_by_node(std::span<const int> devices, int devices_per_node);

}  // namespace ws
