// Tree all-reduce as a FlowSchedule: a double binomial tree (reduce up, then broadcast down), the
// small-message all-reduce of the collective libraries (NCCL's double binary tree in spirit).
#pragma once

#include <span>
#include <vector>

#include "sim/collectives/flow_schedule.hpp"

namespace ws {

// Two binomial trees each carry half the buffer: tree 0 over members in order (root 0), tree 1
// over the members mirrored (root p - 1), so a leaf of one tree is an inner node of the other and
// both halves move at once. Position q's parent is q with its lowest set bit cleared. A member
// sends a chunk up when all its children's copies of it arrived, and down when its parent's did.
// Each half is pipelined in tree_chunks() chunks (a member sends chunk k after its chunk k - 1
// arrived), so large buffers cost about (chunks + 2 x tree height) chunk times instead of
// 2 x height whole-buffer times. Latency terms: 2 x tree height (<= 2 ceil(log2 p)) + chunks - 1.
inline constexpr Bytes kTreeChunkBytes = 512 * 1024;  // estimate: NCCL-like pipeline chunk
inline constexpr Bytes kMaxTreeChunks = 16;           // bounds the flows of very large trees
int tree_chunks(Bytes bytes_per_tree);

FlowSchedule tree_all_reduce_schedule(std::span<const int> devices, Bytes bytes);

// A tree all-reduce (reduce up to the root, broadcast back down) appended one pipeline chunk at a
// time. Position q holds member member_of_position[q] (a member index of the FlowSchedule) and
// has parent parent[q] < q (parent[0] = -1: position 0 is the root). A member sends a chunk up
// after its children's copies of it and its own previous chunk arrived, and down after its
// parent's copy arrived and its child received the previous chunk.
class TreePipeline {
 public:
  TreePipeline(std::vector<int> member_of_position, const std::vector<int>& parent);
  // A binomial tree over `members` (position q's parent: q with its lowest set bit cleared),
  // positions in member order, or mirrored (rooted at the last member).
  static TreePipeline binomial(std::span<const int> members, bool mirrored);
  void append_chunk(FlowSchedule& sc, Bytes bytes);
  int positions() const { return static_cast<int>(member_of_position_.size()); }

 private:
  std::vector<int> member_of_position_, parent_;
  std::vector<std::vector<int>> children_;
  std::vector<int> up_, down_, prev_up_, prev_down_;  // this chunk's and the previous chunk's sends
};

// One binomial tree all-reduce (TreePipeline::binomial) of `bytes` in `chunks` pipeline chunks.
void append_binomial_tree(FlowSchedule& sc, std::span<const int> members, bool mirrored, Bytes bytes, int chunks);

// Open MPI's non-blocking collectives (coll/libnbc, Open MPI 4.1), which the engine calls:
// - MPI_Iallreduce in place (as the engine calls it), or below 4 ranks, or under 64 KiB: the
//   whole buffer reduced up a binomial tree to member 0 (position q sends to q with its lowest set
//   bit cleared once all its children's buffers arrived), then broadcast back down the same tree,
//   in one piece: 2 x tree height whole-buffer transfers, none pipelined (nbc_iallreduce.c,
//   allred_sched_diss). On 2 ranks that is twice the time of a ring or recursive halving.
// - MPI_Ireduce_scatter_block: the same reduce of the whole buffer to member 0, then member 0
//   sends every other member its bytes / p block (nbc_ireduce_scatter_block.c). On 2 ranks 1.5 M
//   moved in sequence where a ring moves M / 2 each way at once.
FlowSchedule binomial_all_reduce_schedule(std::span<const int> devices, Bytes bytes);
FlowSchedule binomial_reduce_scatter_schedule(std::span<const int> devices, Bytes bytes);

}  // namespace ws
