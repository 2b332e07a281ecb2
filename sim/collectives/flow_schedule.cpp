// The schedule executor: its own event queue of ready sends (and delayed receives of merged
// steps), interleaved with the network's events exactly as the ring driver does.
#include "sim/collectives/flow_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/event_queue.hpp"

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

}  // namespace

std::vector<ScheduleResult> run_flow_schedules(FlowNetwork& network, std::span<const FlowSchedule> schedules,
                                               const CollectiveLibrary& library, const WireModel& wire,
                                               const StartSend& start_send) {
  if (!(wire.bandwidth_efficiency > 0.0 && wire.bandwidth_efficiency <= 1.0)) {
    throw std::invalid_argument("run_flow_schedules: bandwidth efficiency must be in (0, 1]");
  }
  const Topology& topology = network.topology();
  std::vector<ScheduleResult> results(schedules.size());
  // Global send index g = base[c] + s; the flow tag is g.
  std::vector<std::size_t> base(schedules.size() + 1, 0);
  for (std::size_t c = 0; c < schedules.size(); ++c) base[c + 1] = base[c] + schedules[c].size();
  const std::size_t total = base.back();
  std::vector<int> waiting(total, 0);       // dependencies not yet received
  std::vector<std::uint32_t> schedule_of(total, 0);
  std::vector<std::size_t> dependents_begin(total + 1, 0);
  for (std::size_t c = 0; c < schedules.size(); ++c) {
    const FlowSchedule& sc = schedules[c];
    for (std::size_t s = 0; s < sc.size(); ++s) {
      const auto id = static_cast<int>(s);
      const ScheduledSend& send = sc.send(id);
      const auto p = static_cast<int>(sc.devices.size());
      if (send.from < 0 || send.from >= p || send.to < 0 || send.to >= p || send.from == send.to) {
        throw std::invalid_argument("run_flow_schedules: send between invalid members");
      }
      schedule_of[base[c] + s] = static_cast<std::uint32_t>(c);
      waiting[base[c] + s] = static_cast<int>(sc.after(id).size());
      for (const int a : sc.after(id)) ++dependents_begin[base[c] + static_cast<std::size_t>(a) + 1];
    }
  }
  for (std::size_t g = 0; g < total; ++g) dependents_begin[g + 1] += dependents_begin[g];
  std::vector<std::size_t> dependents(dependents_begin.back());
  {
    std::vector<std::size_t> fill(dependents_begin.begin(), dependents_begin.end() - 1);
    for (std::size_t c = 0; c < schedules.size(); ++c) {
      for (std::size_t s = 0; s < schedules[c].size(); ++s) {
        for (const int a : schedules[c].after(static_cast<int>(s))) {
          dependents[fill[base[c] + static_cast<std::size_t>(a)]++] = base[c] + s;
        }
      }
    }
  }
  std::vector<Time> merged_delay(total);  // per send with merged steps, set when its flow starts

  EventQueue events;  // payload: kind, id = schedule, data = global send index
  for (std::size_t c = 0; c < schedules.size(); ++c) {
    results[c].start = schedules[c].start;
    results[c].end = schedules[c].start + library.launch_latency;
    for (std::size_t s = 0; s < schedules[c].size(); ++s) {
      if (waiting[base[c] + s] == 0) {
        events.push(schedules[c].start + library.launch_latency + library.step_latency,
                    {kSend, static_cast<std::uint32_t>(c), base[c] + s});
      }
    }
  }

  auto receive = [&](std::size_t g, Time t) {
    const std::uint32_t c = schedule_of[g];
    results[c].end = max(results[c].end, t);
    for (std::size_t i = dependents_begin[g]; i < dependents_begin[g + 1]; ++i) {
      const std::size_t d = dependents[i];
      if (--waiting[d] == 0) events.push(t + library.step_latency, {kSend, c, d});
    }
  };

  std::vector<CompletedFlow> done;
  for (;;) {
    const Time tn = network.next_event_time();
    const Time te = events.empty() ? Time::max() : events.top().time;
    if (tn == Time::max() && te == Time::max()) break;
    // Equal times: the network's completions first, as in the ring driver.
    if (tn <= te) {
      done.clear();
      network.advance(tn, done);
      for (const CompletedFlow& f : done) {
        const auto g = static_cast<std::size_t>(f.tag);
        if (merged_delay[g] > Time::zero()) {
          events.push(f.end + merged_delay[g], {kReceive, schedule_of[g], g});
        } else {
          receive(g, f.end);
        }
      }
      continue;
    }
    const Event e = events.pop();
    const auto g = static_cast<std::size_t>(e.payload.data);
    if (e.payload.kind == kReceive) {
      receive(g, e.time);
      continue;
    }
    const std::size_t c = e.payload.id;
    const FlowSchedule& sc = schedules[c];
    const ScheduledSend& send = sc.send(static_cast<int>(g - base[c]));
    const int src = sc.devices[static_cast<std::size_t>(send.from)];
    const int dst = sc.devices[static_cast<std::size_t>(send.to)];
    double wire_bytes = static_cast<double>(send.bytes) / wire.bandwidth_efficiency;
    if (topology.node_of_device(src) != topology.node_of_device(dst))
      wire_bytes += static_cast<double>(wire.nic_overhead_bytes);
    const auto on_wire = static_cast<Bytes>(std::llround(wire_bytes));
    Time path_latency;
    if (start_send) {
      path_latency = start_send(network, e.time, src, dst, on_wire, static_cast<std::uint64_t>(g)).second;
    } else {
      path_latency = network.path_latency(network.path(network.start_flow(e.time, src, dst, on_wire, static_cast<std::uint64_t>(g))));
    }
    if (send.merged_steps > 0) merged_delay[g] = send.merged_steps * (library.step_latency + path_latency);
    ++results[c].flows;
    results[c].bytes += send.bytes;
    results[c].wire_bytes += on_wire;
  }
  return results;
}

}  // namespace ws
