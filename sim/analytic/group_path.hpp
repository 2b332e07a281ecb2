// Where one kind of communication group (X, Y, Z or data) of a 4D layout lies on a machine, and
// what its ring collectives get from it: effective per-rank ring bandwidth and per-step latency,
// derived from the node's link graph, the NICs and the dragonfly (never from a table of numbers).
#pragma once

#include <vector>

#include "engine/schedule/layout.hpp"
#include "sim/analytic/collective_cost.hpp"
#include "sim/analytic/step_options.hpp"
#include "sim/core/units.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// Routes between the devices of one node, computed once per machine: the direct link when there
// is one, else the widest (max-bottleneck, then fewest-hop) path through the link graph.
struct IntraNodeRoutes {
  int devices = 0;
  // route[a * devices + b]: directed link slots along a -> b; slot = 2 * link + (a is device_b).
  std::vector<std::vector<int>> route;
  std::vector<Bandwidth> slot_bandwidth;  // per directed slot, per direction
  std::vector<Time> slot_latency;
};

IntraNodeRoutes route_intra_node(const NodeSpec& node);

struct GroupPath {
  GroupKind kind = GroupKind::x;
  int ranks = 1;
  Bandwidth bandwidth;          // per-rank ring bandwidth, library efficiency included
  Time step_latency;            // network + library latency of one ring step
  Time launch_latency;          // once per collective call
  const char* where = "local";  // "local" (1 rank), "intra-node", "inter-node", "inter-group"
  // The machine's default library is Open MPI: all-reduce and reduce-scatter are binomial trees
  // (binomial_collective_time), not rings.
  bool binomial_reductions = false;
};

// Ranks sit on devices in rank order (node n holds ranks n*D .. n*D+D-1) and the group of `kind`
// has members at stride group_stride(layout, kind). All groups of one kind run their collective
// at the same time, so rings of that kind share the links, NICs and global links they cross.
// `allocation` says how the job's nodes lie in the dragonfly (see group_path.cpp).
GroupPath group_path(const Machine& machine, const IntraNodeRoutes& routes, const Layout& layout,
                     GroupKind kind, NodeAllocation allocation = NodeAllocation::contiguous);
GroupPath group_path(const Machine& machine, const Layout& layout, GroupKind kind,
                     NodeAllocation allocation = NodeAllocation::contiguous);

// The group's collective (ring, or binomial_collective_time with binomial_reductions) plus the
// library's launch latency; zero for one rank.
Time collective_time(CollectiveOp op, const GroupPath& path, double full_bytes);

}  // namespace ws
