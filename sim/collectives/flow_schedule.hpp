// A collective algorithm as data: per member, the sends it makes and the receives each send waits
// for. One executor runs any number of such schedules together on one FlowNetwork, so ring,
// recursive halving/doubling, trees and hierarchical algorithms share the same timing rules.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/units.hpp"
#include "sim/core/simulation.hpp"
#include "sim/machine/machine.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/sprayed_messages.hpp"

namespace ws {

// One message of a schedule: member `from` sends `bytes` to member `to` (indices into devices).
struct ScheduledSend {
  int from = 0;
  int to = 0;
  Bytes bytes = 0;
  // Steps merged into this send (coalesced ring segments): the receive counts as done
  // merged_steps x (library step latency + path latency) after the flow completes, which is what
  // that many extra lockstep steps would have cost in latency. 0 for an ordinary send.
  int merged_steps = 0;
};

// Sends with their dependencies in compressed rows: send s starts when all sends in
// after(s) have been received (by their receivers, i.e. by the sender of s), plus the library's
// step latency; sends with no dependency start at start + launch latency + step latency.
class FlowSchedule {
 public:
  std::vector<int> devices;  // member -> device id
  Time start;
  // Share of every send's bytes on Valiant paths (SprayedMessages): what the routing policy gives
  // this traffic; 0 is minimal routing.
  double valiant_share = 0.0;

  // Appends a send that waits for the sends `after` (earlier ids); returns its id.
  int add_send(int from, int to, Bytes bytes, std::span<const int> after, int merged_steps = 0);
  int add_send(int from, int to, Bytes bytes, std::initializer_list<int> after, int merged_steps = 0) {
    return add_send(from, to, bytes, std::span<const int>(after.begin(), after.size()), merged_steps);
  }

  // Room for `sends` more sends with `dependencies` more dependencies between them (a large
  // schedule's vectors then grow once instead of doubling).
  void reserve(std::size_t sends, std::size_t dependencies);

  std::size_t size() const { return sends_.size(); }
  const ScheduledSend& send(int id) const { return sends_[static_cast<std::size_t>(id)]; }
  std::span<const int> after(int id) const {
    const auto b = static_cast<std::size_t>(after_begin_[static_cast<std::size_t>(id)]);
    const auto e = static_cast<std::size_t>(after_begin_[static_cast<std::size_t>(id) + 1]);
    return {after_.data() + b, e - b};
  }
  // Bytes summed over all sends: what the network must deliver for this schedule (logical bytes).
  Bytes total_bytes() const { return total_bytes_; }
  // Total algorithm steps = the longest chain of dependent sends, merged steps included.
  int critical_path_steps() const;

 private:
  std::vector<ScheduledSend> sends_;
  std::vector<int> after_begin_{0};
  std::vector<int> after_;
  Bytes total_bytes_ = 0;
};

// How logical bytes become bytes on the wire. A flow of s bytes occupies its links as if it carried
// s / bandwidth_efficiency bytes, plus, across nodes, nic_overhead_bytes: the NIC small-message
// curve eff(s) = E s / (s + h) is the time of (s + h) / E bytes at line rate, and the library's
// efficiency already contains E (it is fitted end to end), so only h is added here.
struct WireModel {
  double bandwidth_efficiency = 1.0;  // (0, 1]
  Bytes nic_overhead_bytes = 0;       // h of NicEfficiencyCurve, inter-node sends only
};

WireModel wire_model(const Machine& machine, const CollectiveLibrary& library);

struct ScheduleResult {
  Time start;
  Time end;  // the last receive of the schedule
  std::uint64_t flows = 0;
  Bytes bytes = 0;       // logical bytes sent
  Bytes wire_bytes = 0;  // bytes given to the network
};

// Schedules as a process on the simulation kernel, sharing `network` (a model of the same kernel):
// schedules may be added while others run (a step's calls as they are issued). Time per send as
// run_flow_schedules says. `on_end(schedule, t)`: told when a schedule's last send is received (or,
// with no sends, after its launch latency).
using ScheduleEnded = std::function<void(int schedule, Time end)>;
class ScheduleRunner final : public EventHandler, public TimedModel {
 public:
  ScheduleRunner(Simulation& sim, FlowNetwork& network, const CollectiveLibrary& library, const WireModel& wire = {},
                 ScheduleEnded on_end = {});
  // Starts `schedule` at its start (never before the kernel's time); returns its index.
  int add(FlowSchedule schedule);  // moved in: a ring over 8,192 ranks has 134 million sends
  std::span<const ScheduleResult> results() const { return results_; }

  Time next_event_time() override { return network_.next_event_time(); }
  void advance(Simulation& sim, Time t) override;
  void on_event(Simulation& sim, std::uint32_t what, std::uint64_t data) override;

 private:
  enum : std::uint32_t { kSend = 0, kReceive = 1, kEnd = 2 };
  void receive(Simulation& sim, std::size_t g, Time t);
  std::size_t schedule_of(std::size_t g) const;

  Simulation& sim_;
  FlowNetwork& network_;
  const CollectiveLibrary& library_;
  WireModel wire_;
  SprayedMessages messages_;
  ScheduleEnded on_end_;
  int handler_ = -1;
  std::vector<FlowSchedule> schedules_;
  std::vector<ScheduleResult> results_;
  std::vector<std::size_t> base_{0};             // schedule -> its first global send index
  std::vector<std::size_t> unreceived_;          // per schedule: sends not yet received
  // Per send, as compact as the largest schedules need (every-step rings over thousands of ranks
  // hold 10^8 sends): global send indices fit 32 bits and dependency counts 16 (checked in add).
  std::vector<std::uint16_t> waiting_;            // dependencies not yet received
  std::vector<std::uint32_t> dependents_begin_{0};  // compressed rows into dependents_
  std::vector<std::uint32_t> dependents_;
  std::unordered_map<std::size_t, Time> merged_delay_;  // sends with merged steps, set when the flow starts
  std::vector<CompletedFlow> done_;
};

// Runs all schedules to completion together (network time must not be past any start). Time per
// send: its dependencies' receives + library step latency, then path latency + wire bytes at the
// max-min share of a sprayed message; launch latency once per schedule. Deterministic: sends that become ready at one
// time start in (schedule, send id) order.
std::vector<ScheduleResult> run_flow_schedules(FlowNetwork& network, std::span<const FlowSchedule> schedules,
                                               const CollectiveLibrary& library, const WireModel& wire = {});
// The same, taking the schedules over instead of copying them (the every-step reference's largest).
std::vector<ScheduleResult> run_flow_schedules(FlowNetwork& network, std::vector<FlowSchedule>&& schedules,
                                               const CollectiveLibrary& library, const WireModel& wire = {});

}  // namespace ws
