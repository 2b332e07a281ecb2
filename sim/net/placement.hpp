// Job placement: which nodes of the machine a job gets, and which device each rank runs on.
// Ranks fill a node's devices in order, so the 4D rank order (X fastest) decides what shares a node.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ws {

// Which nodes a job gets: the first ones, or a seeded sample (a busy machine's free list).
enum class NodeAllocation { contiguous, scattered };
const char* to_string(NodeAllocation allocation);  // "contiguous", "scattered"

// `job_nodes` node ids out of [0, available_nodes): the first ones (contiguous), or a seeded
// uniform sample kept in increasing order (scattered, like a busy machine's free list).
std::vector<int> place_job_nodes(int available_nodes, int job_nodes, NodeAllocation allocation, std::uint64_t seed);

// Device id (node * devices_per_node + local) of each rank: rank r on node job_nodes[r / R], local
// device r mod R, with R = ranks_per_node (0: devices_per_node, full nodes). R < devices_per_node
// is a job launched with fewer ranks than devices per node (srun --gpus-per-node=R): each node's
// first R devices.
std::vector<int> devices_of_ranks(std::span<const int> job_nodes, int devices_per_node, int ranks,
                                  int ranks_per_node = 0);

}  // namespace ws
