// The job on the machine, as both collective models see it: which nodes it holds, the topology
// and link capacities, its communicators, and each communicator kind's collective programs routed
// over the topology (sim/net/traffic.hpp) and priced alone, once per shape (cached).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "workload/layout.hpp"
#include "workload/step_schedule.hpp"
#include "sim/collectives/collective_program.hpp"
#include "sim/machine/machine.hpp"
#include "sim/net/placement.hpp"
#include "sim/net/topology.hpp"
#include "sim/net/traffic.hpp"

namespace ws {

// Which nodes the job gets (NodeAllocation, sim/net/placement.hpp): the first ones in topology
// order (contiguous: whole dragonfly groups), or a seeded uniform sample of the machine's nodes
// (scattered: a busy machine's free list). Ranks fill each node's devices in order either way.

// A kind of communicator over the job's ranks: members `stride` ranks apart, `size` of them. X, Y,
// Z and data are the layout's groups; data x Z (Z fastest, then data) is stride Gx Gy, size Gz Gdata.
// A pipeline stage's communicators cover only its ranks: those r with (r / stage_stride) % stages
// equal to the stage, the first of them `first` (stages 0: every rank; Layout::stage_stride says
// where the rank order puts the stages).
struct GroupGeometry {
  int stride = 1;
  int size = 1;
  int first = 0;
  int stage_stride = 0;
  int stages = 0;
  friend auto operator<=>(const GroupGeometry&, const GroupGeometry&) = default;
};
// The communicators of `group` within pipeline stage `stage` (a layout without stages: all of them).
GroupGeometry geometry(const Layout& layout, CommGroup group, int stage = 0);

// One phase of a program, routed and priced with nothing else in flight.
struct PricedPhase {
  // The phase's link loads at its Valiant share (kept when asked for), shared by every program
  // that runs the same transfers.
  std::shared_ptr<const std::vector<LinkShare>> links;
  TimePerByte time_per_byte;     // alone: per byte of the largest transfer
  Time path_latency;             // links and switches of the longest transfer, per step
  int steps = 1;                 // steps the phase spans (each pays a step and a path latency)
  double bytes_fraction = 0;     // the largest transfer's bytes per byte of the call
  double transfer_weight = 0;    // bytes all its transfers move per byte of the largest one
  bool inter_node = false;       // some transfer leaves its node (pays the NIC's small-message cost)
  double valiant_share = 0;      // of its switch-to-switch traffic (adaptive routing)
  int pipeline = 0;              // the tree's pipeline phases (CollectivePhase::pipeline)
  int channels = 1;              // rings per communicator the phase runs in parallel (ring channels)
};

struct PricedProgram {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  CollectiveOp op = CollectiveOp::all_reduce;
  int members = 1;  // per communicator
  int nodes = 1;    // nodes one communicator spans
  std::vector<PricedPhase> phases;
};

// Everything that decides placement and routing: the node's devices, links and NICs, the dragonfly,
// its routing and background load, the machine's node count, and the job's devices and allocation.
std::string network_fingerprint(const Machine& machine, int devices, NodeAllocation allocation,
                                int ranks_per_node = 0);

// Ranks on each node of a job of `devices` ranks: ranks_per_node, or the node's devices for 0 (full
// nodes), and never more than the job has; its nodes are devices divided by that, rounded up.
int ranks_on_a_node(const Machine& machine, int devices, int ranks_per_node);

class JobNetwork {
 public:
  // `ranks_per_node` ranks on each of the job's nodes (0: one per device, full nodes), on the
  // node's first devices. Throws InputError when the machine has fewer nodes than the job needs
  // or ranks_per_node exceeds the devices per node.
  JobNetwork(const Machine& machine, int devices, NodeAllocation allocation = NodeAllocation::contiguous,
             std::uint64_t seed = 1, int ranks_per_node = 0);
  int job_nodes() const { return static_cast<int>(job_nodes_.size()); }

  const Machine& machine() const { return *machine_; }
  // Prices with `machine` from now on; it must describe the same network (network_fingerprint):
  // a machine that differs in compute or collective-library terms only.
  void use_machine(const Machine& machine);
  const Topology& topology() const { return topology_; }
  std::span<const Bandwidth> capacity() const { return capacity_; }
  int devices() const { return devices_; }
  NodeAllocation allocation() const { return allocation_; }
  // As constructed (0: full nodes); ranks_on_a_node() is the count either way.
  int ranks_per_node() const { return ranks_per_node_; }
  int ranks_on_a_node() const;
  int device_of_rank(int rank) const { return device_of_rank_[static_cast<std::size_t>(rank)]; }
  // How the job's collectives build their schedules (ring channels, node order).
  const ScheduleOptions& schedule_options() const { return schedule_options_; }

  // Every communicator of the geometry, as device ids in member order.
  std::vector<std::vector<int>> communicators(GroupGeometry g) const;
  // Nodes that one communicator of the geometry spans (the first; all are alike up to placement).
  int nodes_spanned(GroupGeometry g);

  // The program of every communicator of `g` running `algorithm` for `op` at once, routed and
  // priced alone; `with_links` keeps each phase's link loads (the flow model needs them).
  const PricedProgram& program(GroupGeometry g, CollectiveAlgorithm algorithm, CollectiveOp op, Bytes bytes,
                               bool with_links);

  // Every rank of pipeline stage `from` sending to its counterpart on stage `to` (stages of
  // `stage_devices` ranks, in rank order) at once: one phase of one step, routed and priced alone
  // (as a program, so both collective models run it as they run a call's phases).
  const PricedProgram& stage_transfer(int from, int to, const Layout& layout, bool with_links);

  // expected_max_of_normals(members) (base/statistics.hpp), kept per count: every layout of the job
  // asks it for its group sizes and its device count (the step's skew), and each answer is a
  // 4,000-point integral.
  double expected_max_of_normals(int members);

 private:
  // The phases of the program routed and priced (the tree's: for a pipelined tree, its levels and
  // its steady phase; the fractions of a given chunk count are set by program()).
  struct Routed {
    std::vector<PricedPhase> phases;
    int tree_local_ranks = 1;
  };
  Routed route(GroupGeometry g, CollectiveAlgorithm algorithm, CollectiveOp op, bool with_links);

  const Machine* machine_;
  int devices_ = 0;
  NodeAllocation allocation_;
  int ranks_per_node_;
  std::vector<int> job_nodes_;
  std::vector<int> device_of_rank_;
  Topology topology_;  // built in place: Boost's graph copies when assigned
  std::vector<Bandwidth> capacity_;
  ScheduleOptions schedule_options_;
  TrafficRouter router_;
  std::map<GroupGeometry, int> nodes_spanned_;
  using RouteKey = std::tuple<GroupGeometry, int, int>;   // geometry, algorithm, op
  using Key = std::tuple<GroupGeometry, int, int, int>;   // ... and the tree's pipeline chunks
  std::map<std::tuple<int, int, int>, PricedProgram> stage_transfers_;  // from, to, stage stride
  std::map<RouteKey, Routed> routed_;
  // Routed phases by their transfers (two independent 64-bit hashes and the count): the ring's
  // all-reduce, reduce-scatter and all-gather move data between the same members.
  using PatternKey = std::tuple<std::uint64_t, std::uint64_t, std::size_t>;
  std::map<PatternKey, PricedPhase> patterns_;
  std::map<Key, PricedProgram> programs_;
  std::map<int, double> expected_max_;
};

// Job networks kept for reuse across machines that share a network (a study's sensitivity and
// sample tasks vary compute and library terms far more often than the network): routing and the
// priced programs survive. Holds at most `capacity` networks, dropping the oldest.
class JobNetworks {
 public:
  explicit JobNetworks(std::size_t capacity = 8) : capacity_(capacity) {}
  JobNetwork& get(const Machine& machine, int devices, NodeAllocation allocation, int ranks_per_node = 0);

 private:
  std::size_t capacity_;
  std::vector<std::pair<std::string, std::unique_ptr<JobNetwork>>> networks_;  // oldest first
};

}  // namespace ws
