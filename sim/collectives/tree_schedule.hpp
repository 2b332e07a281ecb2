// Tree all-reduce as a FlowSchedule: a double binomial tree (reduce up, then broadcast down), the
// small-message all-reduce of the collective libraries (NCCL's double binary tree in spirit).
#pragma once

#include <span>

#include "sim/collectives/flow_schedule.hpp"

namespace ws {

// Two binomial trees each carry half the buffer: tree 0 over members in order (root 0), tree 1
// over the members mirrored (root p - 1), so a leaf of one tree is an inner node of the other and
// both halves move at once. Position q's parent is q with its lowest set bit cleared. A member
// sends up when all its children's sends arrived, and down when its parent's arrived. Not
// pipelined: each message is the whole half, so this is meant for small buffers (2 x tree height
// <= 2 ceil(log2 p) latency terms; each member sends and receives about bytes per tree level).
FlowSchedule tree_all_reduce_schedule(std::span<const int> devices, Bytes bytes);

}  // namespace ws
