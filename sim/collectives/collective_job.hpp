// One collective experiment on a machine: place a job, form its communicators (the whole job, or
// every group of one kind of a 4D layout), run them all at once on one FlowNetwork, and report
// time, NCCL-style bandwidths, the route mix and the busiest links, so that routing is observable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/schedule/layout.hpp"
#include "sim/collectives/collective_algorithm.hpp"
#include "sim/net/placement.hpp"
#include "sim/net/topology.hpp"

namespace ws {

struct CollectiveJobSpec {
  CollectiveOp op = CollectiveOp::all_reduce;
  Bytes bytes = 0;  // all-reduce: buffer; reduce-scatter: input; all-gather: output (per member)
  int nodes = 0;    // job nodes; 0: enough for `devices` (or the layout)
  int devices = 0;  // job devices = ranks; 0: nodes x devices per node
  std::optional<Layout> layout;  // set: run every `group` group of the layout at once
  GroupKind group = GroupKind::data;
  std::optional<CollectiveAlgorithm> algorithm;  // none: the library's selection
  std::string library;                           // empty: the machine's default library
  std::optional<RoutingPolicy> routing;          // none: the machine's
  // Adaptive routing's bias against Valiant paths (RouterOptions). 1: a flow goes non-minimal
  // whenever that path is less loaded, our per-flow stand-in for Slingshot's per-packet adaptivity,
  // which spreads a hot pair's packets over other paths (estimate, fitted to the published
  // all-gather rows at 16-32 nodes, which show no local-link hotspot: sim/collectives/README.md).
  double non_minimal_bias = 1.0;
  PlacementKind placement = PlacementKind::contiguous;
  std::uint64_t seed = 1;
  // Above this many flows (estimated for one send per ring step), ring steps are coalesced into
  // segments (append_ring) so the run stays fast; 0: never coalesce.
  std::uint64_t max_flows = 200'000;
  int top_links = 10;
};

struct LinkUsage {
  int link = 0;
  LinkKind kind = LinkKind::intra_node;
  std::string from, to;  // "device 12", "nic 3", "switch 40"
  double bytes = 0;
};

struct CollectiveJobReport {
  std::string machine, library;
  CollectiveOp op = CollectiveOp::all_reduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  RoutingPolicy routing = RoutingPolicy::adaptive;
  Bytes bytes = 0;
  int nodes = 0, devices = 0;
  int communicators = 0, members = 0;  // communicators run at once, members of each
  int ring_channels = 1, max_segments = 0;  // 0: not coalesced
  Time time;            // launch of all calls to the last receive of any
  double algbw_gbps = 0;  // bytes / time (NCCL's algbw; per communicator)
  double busbw_gbps = 0;  // algbw x 2(p - 1)/p (all-reduce) or (p - 1)/p (NCCL's busbw)
  std::uint64_t flows = 0;
  std::uint64_t minimal_routes = 0, non_minimal_routes = 0;  // inter-node flows by route kind
  Bytes bytes_sent = 0;   // logical bytes of all sends
  std::vector<LinkUsage> busiest;  // by bytes carried, most first (ties: lower link id)
};

const char* to_string(LinkKind kind);  // "intra-node", "NIC injection", "NIC endpoint", "local", "global"

// Throws InputError for impossible requests (more devices than the machine, a layout that does not
// fit, an unknown library, an algorithm that does not do the op).
CollectiveJobReport run_collective_job(const Machine& machine, const CollectiveJobSpec& spec);

}  // namespace ws
