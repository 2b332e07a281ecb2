// Flow-level transport: every active flow gets its max-min fair share of each directed link it
// crosses (progressive filling), recomputed when flows arrive or finish, only over the flows the
// change can reach through saturated links (README). Completion times are integer picoseconds.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/units.hpp"
#include "sim/net/routing.hpp"
#include "sim/net/topology.hpp"

namespace ws {

struct CompletedFlow {
  std::uint64_t tag = 0;  // the caller's label, given to start_flow
  Time start;             // when start_flow was called
  Time end;               // when the last byte arrived
  Bytes bytes = 0;
};

// One member of a flow group (start_flow_group).
struct FlowRequest {
  int src_device = 0;
  int dst_device = 0;
  Bytes bytes = 0;
};

struct FlowNetworkStats {
  std::uint64_t flows_started = 0;
  std::uint64_t flows_completed = 0;
  std::uint64_t recomputes = 0;        // bandwidth-sharing solves (one per distinct event time)
  std::uint64_t flows_resolved = 0;    // flows whose share was recomputed, summed over solves
  std::uint64_t wide_solves = 0;       // solves that had to fall back to the whole component
  std::uint64_t events = 0;            // activation + completion events processed
};

// Owns the active flows and their shares; does not own time beyond its own events. A driver asks
// next_event_time(), and either advances the network to it or handles its own earlier events.
class FlowNetwork {
 public:
  FlowNetwork(const Topology& topology, Router& router);

  // A flow of `bytes` from src to dst (device ids) requested at `now` (>= the last advanced time):
  // routed now, carrying data after the path latency (links + switches), then at its max-min share.
  int start_flow(Time now, int src_device, int dst_device, Bytes bytes, std::uint64_t tag);

  // A coupled group of flows, solved as ONE max-min variable: every member is routed as by
  // start_flow (in order), all members move at the same rate, and a link carrying k members gives
  // the group k shares' worth of weight (weighted max-min). The group carries data from now + its
  // longest member path latency until its largest member is done, and completes as one flow (bytes:
  // the members' sum; per-link bytes exact). Used for collectives whose members advance in
  // lockstep (sim/collectives/ring_coalesced.hpp). `member_latency`, if not empty, receives each
  // member's path latency. path(group) is empty.
  int start_flow_group(Time now, std::span<const FlowRequest> members, std::uint64_t tag,
                       std::span<Time> member_latency = {});

  // Earliest pending activation or completion; Time::max() when nothing is in flight.
  Time next_event_time();
  // Processes all network events at t == next_event_time(), appending flows that completed at t.
  void advance(Time t, std::vector<CompletedFlow>& completed);

  std::size_t active_flows() const { return active_count_; }
  std::span<const int> link_load() const { return link_load_; }
  double link_bytes_delivered(int link) const { return link_bytes_[static_cast<std::size_t>(link)]; }
  // Live flow queries (valid from start_flow until the flow completes).
  double rate_bytes_per_s(int flow) const { return flows_[static_cast<std::size_t>(flow)].rate; }
  const Path& path(int flow) const { return flows_[static_cast<std::size_t>(flow)].path; }
  Time path_latency(const Path& path) const;

  Bytes bytes_delivered() const { return bytes_delivered_; }
  std::uint64_t trace_hash() const { return trace_hash_; }
  const FlowNetworkStats& stats() const { return stats_; }
  const Router& router() const { return *router_; }
  const Topology& topology() const { return *topology_; }

 private:
  enum class FlowState : std::uint8_t { free, pending, active };
  struct GroupLink {
    int link;
    int weight;   // members crossing the link
    Bytes bytes;  // their bytes, summed
  };
  struct FlowGroup {
    std::vector<GroupLink> links;  // sorted by link id
    std::vector<int> position;     // index of the group in each link's flow list
  };
  struct Flow {
    Path path;
    std::array<int, Path::kMaxLinks> position{};  // index of this flow in each link's flow list
    double remaining = 0;  // bytes still to deliver at last_update
    double rate = 0;       // bytes per second
    Time last_update;
    Time start;
    Bytes bytes = 0;
    std::uint64_t tag = 0;
    std::uint64_t version = 0;  // bumps when the flow is freed (stale activation events)
    Time due;                   // scheduled completion, while in the completion heap
    std::uint64_t due_sequence = 0;  // tie-breaker among equal completion times: scheduling order
    int heap_index = -1;        // position in completion_heap_, -1 when not scheduled
    int group = -1;             // index into groups_ for a flow group, -1 for a plain flow
    FlowState state = FlowState::free;
  };
  struct LinkEntry {
    int flow;
    int slot;  // index into the flow's path
  };

  int allocate_flow();
  template <typename Fn>
  void for_each_link(const Flow& flow, Fn&& fn) const;  // fn(slot, link, weight)
  int& position(const LinkEntry& e);
  void activate(int f, Time t);
  void complete(int f, Time t, std::vector<CompletedFlow>& completed);
  void touch(int link);
  void resolve(Time t);
  bool solve(Time t, bool restricted);
  void schedule_completion(int f, Time t);
  // Completions live in an indexed 4-ary min-heap on (due, due_sequence): a share change moves the
  // flow's entry in place instead of leaving a stale event behind.
  bool due_before(int a, int b) const;
  void heap_place(int f, std::size_t i);
  void heap_sift_up(std::size_t i);
  void heap_sift_down(std::size_t i);
  void heap_remove(int f);

  const Topology* topology_;
  Router* router_;
  EventQueue events_;  // activations only (one per flow, in (time, insertion) order)
  std::vector<int> completion_heap_;
  std::uint64_t due_sequence_ = 0;
  std::vector<Flow> flows_;
  std::vector<int> free_flows_;
  std::vector<FlowGroup> groups_;
  std::vector<int> free_groups_;
  std::vector<int> link_weight_;  // members of active flows on each link (solver: unfixed count)
  std::vector<std::vector<LinkEntry>> link_flows_;
  std::vector<int> link_load_;  // flows routed over each link, pending included (router's view)
  std::vector<double> link_bytes_;
  std::vector<double> capacity_;  // bytes/s per link (solver scratch: residual capacity)
  std::vector<int> unfixed_;      // solver scratch: flows not yet fixed per link
  std::vector<std::uint64_t> link_stamp_;
  std::vector<std::uint8_t> saturated_;  // link had no capacity left after the last solve over it
  std::vector<int> boundary_links_;
  std::vector<std::uint64_t> flow_stamp_;
  std::vector<int> touched_;
  std::vector<int> component_links_;
  std::vector<int> component_flows_;
  std::vector<std::pair<double, int>> heap_;
  std::uint64_t epoch_ = 0;
  std::size_t active_count_ = 0;
  Time now_;
  Bytes bytes_delivered_ = 0;
  std::uint64_t trace_hash_ = 0;
  FlowNetworkStats stats_;
};

}  // namespace ws
