// Hierarchical (node-aware) collectives as FlowSchedules: an intra-node ring over the node's own
// links, then rings across nodes, one per local rank, so every local rank drives its own NIC, then
// the intra-node ring again.
#pragma once

#include <span>

#include "sim/collectives/flow_schedule.hpp"
#include "workload/collective_op.hpp"

namespace ws {

// With n nodes of L members each (members grouped by node in order of first appearance):
//  all-reduce:     intra-node reduce-scatter of bytes; n-member all-reduce of bytes / L per local
//                  rank j; intra-node all-gather of bytes;
//  reduce-scatter: intra-node reduce-scatter of bytes; n-member reduce-scatter of bytes / L;
//  all-gather:     n-member all-gather of bytes / L; intra-node all-gather of bytes.
// Intra-node phases run two rings in opposite directions with half the bytes each (L > 2), so both
// directions of the node's links carry data. Each member's first send of a phase waits for its
// last receives of the previous phase (no global barrier). Falls back to one ring when the communicator has one node, one member per node, or
// nodes with different member counts. max_segments as in append_ring. node_order: the order of a
// full node's devices in its intra-node rings (intra_node_ring_order); empty: the communicator's.
FlowSchedule hierarchical_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes, int devices_per_node,
                                   int max_segments = 0, std::span<const int> node_order = {});

// NCCL's tree all-reduce across nodes (NCCL 2.4: a chain inside the node, double binary trees
// between nodes): per local rank j (a channel), the node's members form a chain under member j
// (in node_order from j), and the nodes' j-th members two binomial trees over the nodes, mirrored,
// half of bytes / L each; every chunk (tree_chunks) goes up the chains and the trees and back down,
// every hop of every chunk in flight at once (TreePipeline). Every local rank drives its own NIC;
// a node sends its trees' share across the network (on two nodes each byte once each way, where a
// ring sends 2(p - 1)/p of it), in 2 (L - 1) + 2h hops of latency, not the ring's 2(p - 1).
// One node, one member per node, or uneven nodes: the flat double binomial tree.
FlowSchedule node_tree_all_reduce_schedule(std::span<const int> devices, Bytes bytes, int devices_per_node,
                                           int max_segments = 0, std::span<const int> node_order = {});

}  // namespace ws
