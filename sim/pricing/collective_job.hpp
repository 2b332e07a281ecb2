// One collective experiment on a machine: place a job, form its communicators (the whole job, or
// every group of one kind of a 4D layout), run them all at once, and report time, NCCL-style
// bandwidths, each phase's Valiant share and the busiest links, so that routing is observable.
// Two models: the phases (every communicator of a phase as one shaped flow, as studies price
// collectives) and the every-step reference (each send of each step its own flow).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "sim/collectives/collective_algorithm.hpp"
#include "sim/pricing/collective_pricing.hpp"
#include "sim/pricing/job_network.hpp"

namespace ws {

struct CollectiveJobSpec {
  CollectiveOp op = CollectiveOp::all_reduce;
  Bytes bytes = 0;  // all-reduce: buffer; reduce-scatter: input; all-gather: output (per member)
  int nodes = 0;    // job nodes; 0: enough for `devices` (or the layout)
  int devices = 0;  // job devices = ranks; 0: nodes x ranks per node
  // Ranks on each node, on its first devices (srun --gpus-per-node); 0: every device of a node, or
  // devices / nodes when both are given.
  int ranks_per_node = 0;
  std::optional<Layout> layout;  // set: run every `group` group of the layout at once
  CommGroup group = CommGroup::data;
  std::optional<CollectiveAlgorithm> algorithm;  // none: the library's selection
  std::string library;                           // empty: the machine's default library
  std::optional<RoutingPolicy> routing;          // none: the machine's
  NodeAllocation placement = NodeAllocation::contiguous;
  std::uint64_t seed = 1;  // scattered placement
  // closed_form: the call's phases alone, each at its most loaded link's rate (what the flow model
  // gives a call that runs alone); every_step: the per-send reference. flow is not offered here.
  CollectiveModel model = CollectiveModel::closed_form;
  int top_links = 10;
};

struct LinkUsage {
  int link = 0;
  LinkKind kind = LinkKind::intra_node;
  std::string from, to;  // "device 12", "nic 3", "switch 40"
  double bytes = 0;
};

struct PhaseUsage {
  int steps = 1;
  double valiant_share = 0;
  Time time;  // alone: its latency and its bytes at its most loaded link's rate
};

struct CollectiveJobReport {
  std::string machine, library;
  CollectiveOp op = CollectiveOp::all_reduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  RoutingPolicy routing = RoutingPolicy::adaptive;
  CollectiveModel model = CollectiveModel::closed_form;
  Bytes bytes = 0;
  int nodes = 0, devices = 0;
  int ranks_per_node = 0;  // on every node but perhaps the last
  int communicators = 0, members = 0;  // communicators run at once, members of each
  int ring_channels = 1;
  Time time;              // launch of all calls to the last receive of any
  double algbw_gbps = 0;  // bytes / time (NCCL's algbw; per communicator)
  double busbw_gbps = 0;  // algbw x 2(p - 1)/p (all-reduce) or (p - 1)/p (NCCL's busbw)
  std::vector<PhaseUsage> phases;
  std::uint64_t flows = 0;  // every-step model: flows run
  std::vector<LinkUsage> busiest;  // by bytes carried, most first (ties: lower link id)
};

const char* to_string(LinkKind kind);  // "intra-node", "NIC injection", "NIC endpoint", "local", "global"

// Throws InputError for impossible requests (more devices than the machine, a layout that does not
// fit, an unknown library, an algorithm that does not do the op).
CollectiveJobReport run_collective_job(const Machine& machine, const CollectiveJobSpec& spec);

}  // namespace ws
