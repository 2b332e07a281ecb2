// Ring collectives as FlowSchedules: the building block the ring, multi-channel ring and
// hierarchical algorithms share. Same sends, sizes and dependencies as run_ring_collectives.
#pragma once

#include <span>
#include <vector>

#include "sim/collectives/flow_schedule.hpp"
#include "sim/core/collective_op.hpp"

namespace ws {

// Bytes of the chunk `member` sends at `step` of a ring of p members over `total` bytes: the
// reduce-scatter phase sends chunk (i - k) mod p, the all-gather phase chunk (i + 1 - k) mod p;
// the first total % p chunks are one byte larger.
Bytes ring_chunk_bytes(CollectiveOp op, Bytes total, int p, int member, int step);

// Appends one ring over `members` (member indices of `schedule`, in ring order: position j sends
// to position j + 1). The first send of position j waits for entry[j] (a send id, or -1 for none;
// empty span: no entry dependencies). With max_segments > 0 and more steps than that, consecutive
// steps are merged into max_segments sends per position (their bytes summed, their latencies kept
// as merged steps): exact for lockstep rings, an approximation otherwise. Returns, per position,
// the id of the send that delivers its last receive (-1 for a ring of one).
std::vector<int> append_ring(FlowSchedule& schedule, CollectiveOp op, std::span<const int> members, Bytes bytes,
                             std::span<const int> entry = {}, int max_segments = 0);

struct RingOptions {
  int devices_per_node = 1;
  // Rings run in parallel over channels, each with bytes / channels (NCCL's channels): channel c
  // rotates the order of each node's members by c * L / channels, so each channel enters and leaves
  // a node through different devices and thus different NICs. Used only when the communicator
  // spans several nodes with the same number L >= 2 of members on each; otherwise one ring.
  int channels = 1;
  int max_segments = 0;  // see append_ring
};

// The ring algorithm over `devices` in their order (member i sends to member i + 1).
FlowSchedule ring_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes, const RingOptions& options);

// Members grouped by node in order of first appearance: nodes[k] lists member indices on the k-th
// node. Used by the multi-channel ring and the hierarchical algorithm.
std::vector<std::vector<int>> members_by_node(std::span<const int> devices, int devices_per_node);

}  // namespace ws
