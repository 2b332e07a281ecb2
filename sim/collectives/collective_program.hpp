// A collective call of every communicator of one kind at once, as a sequence of phases: each phase
// is the set of transfers the algorithm makes at one depth of its dependency graph, and they
// progress together, at the pace of the slowest (a lockstep algorithm waits for its slowest member
// at every step). Ring steps that repeat the same transfers are one phase spanning all of them.
// Both collective models (sim/pricing) run these phases: the closed form prices each alone, the
// flow network runs them alongside everything else in flight.
#pragma once

#include <span>
#include <vector>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/net/traffic.hpp"

namespace ws {

struct CollectivePhase {
  // Every transfer of the phase, all communicators; weight = its bytes / the largest transfer's.
  std::vector<TrafficDemand> transfers;
  double bytes_fraction = 0;  // the largest transfer's bytes / the call's bytes (per member)
  int steps = 1;              // algorithm steps the phase spans: each pays a step and path latency
  // 0, or the phase is rings: its transfers come in consecutive blocks of this many, each block a
  // ring (member i to i + 1). A ring's step k + 1 waits only for its predecessor's step k, so the
  // latency its steps add up is the mean over the ring's hops, not the longest hop.
  int ring_members = 0;
  // The tree's pipeline (tree_pipeline): 0 none, 1 a level (one chunk), 2 the steady phase.
  int pipeline = 0;
  // Where the schedule is kept (`after` below): the send of one communicator's schedule behind each
  // of the phase's transfers, in order; every communicator contributes these sends, in turn.
  std::vector<int> sends;
};

struct CollectiveProgram {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  std::vector<CollectivePhase> phases;  // empty for one-member communicators
  // One communicator's schedule, for algorithms whose sends wait on other members' receives (not
  // rings): per send, the sends it waits for and its merged steps. The latency its steps add up is
  // the longest chain of path latencies through it, which per-phase longest hops overstate.
  std::vector<std::vector<int>> after;
  std::vector<int> merged_steps;
  int tree_local_ranks = 1;  // the tree's L (tree_pipeline)
};

// The program of `algorithm` for `op` over every communicator (each a list of device ids in member
// order, all of one size). Built from the algorithm's FlowSchedule (build_schedule) with ring
// steps merged (max_segments = 1), grouped by dependency depth; fractions do not depend on the
// call's bytes, except the tree's pipeline: see tree_pipeline.
CollectiveProgram collective_program(CollectiveAlgorithm algorithm, CollectiveOp op,
                                     std::span<const std::vector<int>> communicators,
                                     const ScheduleOptions& options);

// The tree's pipeline (tree_all_reduce_schedule, node_tree_all_reduce_schedule): its trees carry
// bytes / L per local rank (L = members per node, 1 for a flat tree), half per tree, in c =
// tree_chunks chunks; with L > 1 each chunk also climbs a chain through the node before the trees
// and comes back down it after them. Its program comes as one chunk's hops, level by level (filling
// the pipeline; phase.pipeline == 1), and one phase with every hop busy at once (all transfers,
// phase.pipeline == 2) for the other c - 1 chunks, one step each: (2h + c - 1) chunk times for
// a tree of 2h levels of hops, as the FlowSchedule's pipeline takes in lockstep. The program is
// built for one chunk; a call of c chunks divides the levels' fractions by c, and gives the
// steady phase (c - 1) / c of its bytes over c - 1 steps (none when c == 1): JobNetwork::program.

}  // namespace ws
