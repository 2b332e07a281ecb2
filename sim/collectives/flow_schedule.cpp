// The schedule executor: a process of ready sends on the simulation kernel, with the network as
// the kernel's model (its completions first at equal times, as the ring driver has them).
#include "sim/collectives/flow_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/simulation.hpp"

namespace ws {

int FlowSchedule::add_send(int from, int to, Bytes bytes, std::span<const int> after, int merged_steps) {
  const int id = static_cast<int>(sends_.size());
  for (const int a : after) {
    if (a < 0 || a >= id) throw std::invalid_argument("FlowSchedule::add_send: dependency is not an earlier send");
  }
  sends_.push_back({from, to, bytes, merged_steps});
  after_.insert(after_.end(), after.begin(), after.end());
  after_begin_.push_back(static_cast<int>(after_.size()));
  total_bytes_ += bytes;
  return id;
}

int FlowSchedule::critical_path_steps() const {
  std::vector<int> depth(sends_.size(), 0);
  int longest = 0;
  for (std::size_t s = 0; s < sends_.size(); ++s) {
    int d = 0;
    for (const int a : after(static_cast<int>(s))) d = std::max(d, depth[static_cast<std::size_t>(a)]);
    depth[s] = d + 1 + sends_[s].merged_steps;
    longest = std::max(longest, depth[s]);
  }
  return longest;
}

WireModel wire_model(const Machine& machine, const CollectiveLibrary& library) {
  return {library.bandwidth_efficiency, machine.node.nic_efficiency.half_bandwidth_bytes};
}

namespace {

enum EventKind : std::uint32_t { kSend = 0, kReceive = 1 };

// The schedules on the simulation kernel: a process of ready sends (and delayed receives of merged
// steps), and the network a model whose completions are the receives.
class ScheduleExecution final : public EventHandler, public TimedModel {
 public:
  ScheduleExecution(FlowNetwork& network, std::span<const FlowSchedule> schedules, const CollectiveLibrary& library,
                    const WireModel& wire, const StartSend& start_send)
      : network_(network), schedules_(schedules), library_(library), wire_(wire), start_send_(start_send),
        results_(schedules.size()), base_(schedules.size() + 1, 0) {
    // Global send index g = base[c] + s; the flow tag is g.
    for (std::size_t c = 0; c < schedules.size(); ++c) base_[c + 1] = base_[c] + schedules[c].size();
    const std::size_t total = base_.back();
    waiting_.assign(total, 0);
    schedule_of_.assign(total, 0);
    dependents_begin_.assign(total + 1, 0);
    for (std::size_t c = 0; c < schedules.size(); ++c) {
      const FlowSchedule& sc = schedules[c];
      for (std::size_t s = 0; s < sc.size(); ++s) {
        const auto id = static_cast<int>(s);
        const ScheduledSend& send = sc.send(id);
        const auto p = static_cast<int>(sc.devices.size());
        if (send.from < 0 || send.from >= p || send.to < 0 || send.to >= p || send.from == send.to) {
          throw std::invalid_argument("run_flow_schedules: send between invalid members");
        }
        schedule_of_[base_[c] + s] = static_cast<std::uint32_t>(c);
        waiting_[base_[c] + s] = static_cast<int>(sc.after(id).size());
        for (const int a : sc.after(id)) ++dependents_begin_[base_[c] + static_cast<std::size_t>(a) + 1];
      }
    }
    for (std::size_t g = 0; g < total; ++g) dependents_begin_[g + 1] += dependents_begin_[g];
    dependents_.resize(dependents_begin_.back());
    std::vector<std::size_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
    for (std::size_t c = 0; c < schedules.size(); ++c) {
      for (std::size_t s = 0; s < schedules[c].size(); ++s) {
        for (const int a : schedules[c].after(static_cast<int>(s))) {
          dependents_[fill[base_[c] + static_cast<std::size_t>(a)]++] = base_[c] + s;
        }
      }
    }
    merged_delay_.resize(total);  // per send with merged steps, set when its flow starts
  }

  std::vector<ScheduleResult> run() && {
    Simulation sim;
    handler_ = sim.add_handler(*this);
    sim.add_model(*this);
    for (std::size_t c = 0; c < schedules_.size(); ++c) {
      results_[c].start = schedules_[c].start;
      results_[c].end = schedules_[c].start + library_.launch_latency;
      for (std::size_t s = 0; s < schedules_[c].size(); ++s) {
        if (waiting_[base_[c] + s] == 0) {
          sim.schedule(schedules_[c].start + library_.launch_latency + library_.step_latency, handler_, kSend,
                       base_[c] + s);
        }
      }
    }
    sim.run();
    return std::move(results_);
  }

  Time next_event_time() override { return network_.next_event_time(); }

  void advance(Simulation& sim, Time t) override {
    done_.clear();
    network_.advance(t, done_);
    for (const CompletedFlow& f : done_) {
      const auto g = static_cast<std::size_t>(f.tag);
      if (merged_delay_[g] > Time::zero()) {
        sim.schedule(f.end + merged_delay_[g], handler_, kReceive, g);
      } else {
        receive(sim, g, f.end);
      }
    }
  }

  void on_event(Simulation& sim, std::uint32_t what, std::uint64_t data) override {
    const auto g = static_cast<std::size_t>(data);
    if (what == kReceive) {
      receive(sim, g, sim.now());
      return;
    }
    const std::size_t c = schedule_of_[g];
    const FlowSchedule& sc = schedules_[c];
    const ScheduledSend& send = sc.send(static_cast<int>(g - base_[c]));
    const int src = sc.devices[static_cast<std::size_t>(send.from)];
    const int dst = sc.devices[static_cast<std::size_t>(send.to)];
    double wire_bytes = static_cast<double>(send.bytes) / wire_.bandwidth_efficiency;
    if (network_.topology().node_of_device(src) != network_.topology().node_of_device(dst))
      wire_bytes += static_cast<double>(wire_.nic_overhead_bytes);
    const auto on_wire = static_cast<Bytes>(std::llround(wire_bytes));
    Time path_latency;
    if (start_send_) {
      path_latency = start_send_(network_, sim.now(), src, dst, on_wire, static_cast<std::uint64_t>(g)).second;
    } else {
      path_latency = network_.path_latency(
          network_.path(network_.start_flow(sim.now(), src, dst, on_wire, static_cast<std::uint64_t>(g))));
    }
    if (send.merged_steps > 0) merged_delay_[g] = send.merged_steps * (library_.step_latency + path_latency);
    ++results_[c].flows;
    results_[c].bytes += send.bytes;
    results_[c].wire_bytes += on_wire;
  }

 private:
  void receive(Simulation& sim, std::size_t g, Time t) {
    const std::uint32_t c = schedule_of_[g];
    results_[c].end = max(results_[c].end, t);
    for (std::size_t i = dependents_begin_[g]; i < dependents_begin_[g + 1]; ++i) {
      const std::size_t d = dependents_[i];
      if (--waiting_[d] == 0) sim.schedule(t + library_.step_latency, handler_, kSend, d);
    }
  }

  FlowNetwork& network_;
  std::span<const FlowSchedule> schedules_;
  const CollectiveLibrary& library_;
  const WireModel& wire_;
  const StartSend& start_send_;
  std::vector<ScheduleResult> results_;
  std::vector<std::size_t> base_;
  std::vector<int> waiting_;  // dependencies not yet received
  std::vector<std::uint32_t> schedule_of_;
  std::vector<std::size_t> dependents_begin_;
  std::vector<std::size_t> dependents_;
  std::vector<Time> merged_delay_;
  std::vector<CompletedFlow> done_;
  int handler_ = -1;
};

}  // namespace

std::vector<ScheduleResult> run_flow_schedules(FlowNetwork& network, std::span<const FlowSchedule> schedules,
                                               const CollectiveLibrary& library, const WireModel& wire,
                                               const StartSend& start_send) {
  if (!(wire.bandwidth_efficiency > 0.0 && wire.bandwidth_efficiency <= 1.0)) {
    throw std::invalid_argument("run_flow_schedules: bandwidth efficiency must be in (0, 1]");
  }
  return ScheduleExecution(network, schedules, library, wire, start_send).run();
}

}  // namespace ws
