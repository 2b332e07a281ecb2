// Flow-level transport: every active flow gets its max-min fair share of each directed link it
// crosses (progressive filling), recomputed when flows arrive or finish, only over the flows the
// change can reach through saturated links (README). Completion times are integer picoseconds.
// Every flow is shaped: it loads a registered set of links with weights (a message sprayed over the
// paths the traffic model routes, sprayed_messages.hpp, or every flow of a collective phase coupled
// to one rate), and repeated sets of active shapes can reuse their solved rates (memoization).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "base/units.hpp"
#include "sim/net/link_share.hpp"
#include "sim/net/topology.hpp"

namespace ws {

struct CompletedFlow {
  std::uint64_t tag = 0;  // the caller's label, given when the flow started
  Time start;             // when the flow was requested
  Time end;               // when the last byte arrived
  Bytes bytes = 0;
};

struct FlowNetworkStats {
  std::uint64_t flows_started = 0;
  std::uint64_t flows_completed = 0;
  std::uint64_t recomputes = 0;        // bandwidth-sharing solves (one per distinct event time)
  std::uint64_t flows_resolved = 0;    // flows whose share was recomputed, summed over solves
  std::uint64_t wide_solves = 0;       // solves that had to fall back to the whole component
  std::uint64_t events = 0;            // activation + completion events processed
  std::uint64_t memo_hits = 0;         // solves answered from a memoized set of active shapes
};

// Owns the active flows and their shares; does not own time beyond its own events. Its owner is a
// model of the simulation kernel (sim/core/simulation.hpp): the kernel asks next_event_time() and
// advances the network to it when no earlier event is queued.
class FlowNetwork {
 public:
  // `capacity`: per link (link_capacities in traffic.hpp, e.g. with other jobs' load on
  // the global links); empty: every link's bandwidth.
  explicit FlowNetwork(const Topology& topology, std::span<const Bandwidth> capacity = {});

  // Registers a link set for shaped flows: `links` sorted by link id, weights > 0. A shaped flow at
  // rate r puts weight x r on each link; in the max-min solve a link of weight w counts as w flows
  // (weighted max-min), so a shape that sums k coupled flows of one collective phase moves all k at
  // the rate each would get. Returns the shape id (valid for the network's life).
  int add_shape(std::vector<LinkShare> links);
  const std::vector<LinkShare>& shape(int id) const { return shapes_[static_cast<std::size_t>(id)]; }
  // A shaped flow requested at `now`: it carries data from now + `latency`, until `progress_bytes`
  // have moved at its rate; it delivers `bytes` in total (what completion reports) and each link
  // progress_bytes x weight.
  int start_shaped_flow(Time now, int shape, Time latency, double progress_bytes, Bytes bytes,
                        std::uint64_t tag);
  // Memoized mode, for networks of shaped flows only (set before the first flow): the rates
  // solved for one multiset of active shapes are kept and reused when the same multiset is active
  // again (every layer of a training step repeats the same concurrency). Exact: max-min rates
  // depend only on the active link sets. A new multiset is solved by progressive filling over the
  // active shapes (a handful of flows with many links each), without per-link flow lists.
  void set_memoization(bool on);

  // Earliest pending activation or completion; Time::max() when nothing is in flight.
  Time next_event_time();
  // Processes all network events at t == next_event_time(), appending flows that completed at t.
  void advance(Time t, std::vector<CompletedFlow>& completed);

  std::size_t active_flows() const { return active_count_; }
  double link_bytes_delivered(int link) const;
  // Live flow queries (valid from start_shaped_flow until the flow completes).
  double rate_bytes_per_s(int flow) const { return flows_[static_cast<std::size_t>(flow)].rate; }

  Bytes bytes_delivered() const { return bytes_delivered_; }
  std::uint64_t trace_hash() const { return trace_hash_; }
  const FlowNetworkStats& stats() const { return stats_; }
  const Topology& topology() const { return *topology_; }

 private:
  enum class FlowState : std::uint8_t { free, pending, active };
  struct Flow {
    std::vector<int> shape_position;  // index of this flow in each of its links' flow lists
    double remaining = 0;  // bytes still to deliver at last_update (progress bytes)
    double progress = 0;   // progress bytes in total (per-link bytes of a shaped flow)
    double rate = 0;       // bytes per second
    Time last_update;
    Time start;
    Bytes bytes = 0;
    std::uint64_t tag = 0;
    std::uint64_t version = 0;  // bumps when the flow is freed (stale activation events)
    Time due;                   // scheduled completion, while in the completion heap
    std::uint64_t due_sequence = 0;  // tie-breaker among equal completion times: scheduling order
    int heap_index = -1;        // position in completion_heap_, -1 when not scheduled
    int shape = -1;             // index into shapes_; -1 while the flow is free
    FlowState state = FlowState::free;
  };
  struct LinkEntry {
    int flow;
    int slot;  // index into the flow's shape
  };

  int allocate_flow();
  template <typename Fn>
  void for_each_link(const Flow& flow, Fn&& fn) const;  // fn(slot, link, weight)
  double weight_on(const Flow& flow, int slot) const;
  bool solve_from_memo(Time t);
  void solve_shapes(Time t);
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
  EventQueue events_;  // activations only (one per flow, in (time, insertion) order)
  std::vector<int> completion_heap_;
  std::uint64_t due_sequence_ = 0;
  std::vector<Flow> flows_;
  std::vector<int> free_flows_;
  std::vector<std::vector<LinkShare>> shapes_;
  std::vector<double> link_capacity_;  // bytes/s
  std::vector<double> link_weight_;  // weight of active flows on each link (solver: unfixed count)
  std::vector<std::vector<LinkEntry>> link_flows_;
  std::vector<double> link_bytes_;
  std::vector<double> capacity_;  // bytes/s per link (solver scratch: residual capacity)
  std::vector<double> unfixed_;   // solver scratch: weight of flows not yet fixed per link
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
  bool memoize_ = false;
  bool memo_dirty_ = false;                          // the active set changed since the last solve
  std::vector<int> active_shaped_;                   // memoized mode: the active flows, by shape
  std::vector<int> memo_key_;                        // sorted shapes of the active flows
  std::map<std::vector<int>, std::vector<double>> memo_;  // key -> rate per key entry
  std::vector<double> shape_bytes_;                  // memoized mode: progress delivered per shape
  Time now_;
  Bytes bytes_delivered_ = 0;
  std::uint64_t trace_hash_ = 0;
  FlowNetworkStats stats_;
};

}  // namespace ws
