// The schedule executor: a process of ready sends on the simulation kernel, with the network as
// the kernel's model (its completions first at equal times, as the ring driver has them).
#include "sim/collectives/flow_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

namespace {
// Room for `more` elements, growing at least geometrically: schedules that append many small rings
// reserve before each, and exact growth would copy the whole schedule every time.
template <class T>
void reserve_more(std::vector<T>& v, std::size_t more) {
  const std::size_t wanted = v.size() + more;
  if (wanted > v.capacity()) v.reserve(std::max(wanted, 2 * v.capacity()));
}
}  // namespace

void FlowSchedule::reserve(std::size_t sends, std::size_t dependencies) {
  reserve_more(sends_, sends);
  reserve_more(after_begin_, sends);
  reserve_more(after_, dependencies);
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

ScheduleRunner::ScheduleRunner(Simulation& sim, FlowNetwork& network, const CollectiveLibrary& library,
                               const WireModel& wire, ScheduleEnded on_end)
    : sim_(sim), network_(network), library_(library), wire_(wire), messages_(network), on_end_(std::move(on_end)) {
  if (!(wire.bandwidth_efficiency > 0.0 && wire.bandwidth_efficiency <= 1.0)) {
    throw std::invalid_argument("run_flow_schedules: bandwidth efficiency must be in (0, 1]");
  }
  handler_ = sim.add_handler(*this);
  sim.add_model(*this);
}

int ScheduleRunner::add(FlowSchedule schedule) {
  const std::size_t c = schedules_.size();
  const std::size_t base = base_.back();
  const std::size_t n = schedule.size();
  const auto p = static_cast<int>(schedule.devices.size());
  for (std::size_t s = 0; s < n; ++s) {
    const ScheduledSend& send = schedule.send(static_cast<int>(s));
    if (send.from < 0 || send.from >= p || send.to < 0 || send.to >= p || send.from == send.to) {
      throw std::invalid_argument("run_flow_schedules: send between invalid members");
    }
  }
  // Global send index g = base + s (the flow tag); dependents in compressed rows, appended.
  const std::size_t first = dependents_begin_.back();
  std::size_t dependencies = 0;
  for (std::size_t s = 0; s < n; ++s) dependencies += schedule.after(static_cast<int>(s)).size();
  if (base + n > std::numeric_limits<std::uint32_t>::max() ||
      first + dependencies > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("run_flow_schedules: more than 2^32 sends or dependencies in flight");
  }
  waiting_.resize(base + n, 0);
  // count[s]: dependents of send s, turned into each row's fill cursor below.
  std::vector<std::uint32_t> count(n + 1, 0);
  for (std::size_t s = 0; s < n; ++s) {
    const auto after = schedule.after(static_cast<int>(s));
    if (after.size() > std::numeric_limits<std::uint16_t>::max())
      throw std::length_error("run_flow_schedules: a send with more than 65,535 dependencies");
    waiting_[base + s] = static_cast<std::uint16_t>(after.size());
    for (const int a : after) ++count[static_cast<std::size_t>(a) + 1];
  }
  dependents_begin_.reserve(dependents_begin_.size() + n);
  for (std::size_t s = 0; s < n; ++s) {
    count[s + 1] += count[s];
    dependents_begin_.push_back(static_cast<std::uint32_t>(first + count[s + 1]));
  }
  dependents_.resize(dependents_begin_.back());
  for (std::size_t s = 0; s < n; ++s) {
    for (const int a : schedule.after(static_cast<int>(s)))
      dependents_[first + count[static_cast<std::size_t>(a)]++] = static_cast<std::uint32_t>(base + s);
  }
  base_.push_back(base + n);
  unreceived_.push_back(n);
  ScheduleResult r;
  r.start = schedule.start;
  r.end = schedule.start + library_.launch_latency;
  results_.push_back(r);
  const Time first_send = schedule.start + library_.launch_latency + library_.step_latency;
  schedules_.push_back(std::move(schedule));
  if (n == 0) {
    sim_.schedule(results_[c].end, handler_, kEnd, c);
  } else {
    for (std::size_t s = 0; s < n; ++s) {
      if (waiting_[base + s] == 0) sim_.schedule(first_send, handler_, kSend, base + s);
    }
  }
  return static_cast<int>(c);
}

void ScheduleRunner::advance(Simulation& sim, Time t) {
  done_.clear();
  network_.advance(t, done_);
  for (const CompletedFlow& f : done_) {
    const auto g = static_cast<std::size_t>(f.tag);
    if (const auto merged = merged_delay_.find(g); merged != merged_delay_.end()) {
      sim.schedule(f.end + merged->second, handler_, kReceive, g);
      merged_delay_.erase(merged);
    } else {
      receive(sim, g, f.end);
    }
  }
}

void ScheduleRunner::on_event(Simulation& sim, std::uint32_t what, std::uint64_t data) {
  if (what == kEnd) {
    if (on_end_) on_end_(static_cast<int>(data), sim.now());
    return;
  }
  const auto g = static_cast<std::size_t>(data);
  if (what == kReceive) {
    receive(sim, g, sim.now());
    return;
  }
  const std::size_t c = schedule_of(g);
  const FlowSchedule& sc = schedules_[c];
  const ScheduledSend& send = sc.send(static_cast<int>(g - base_[c]));
  const int src = sc.devices[static_cast<std::size_t>(send.from)];
  const int dst = sc.devices[static_cast<std::size_t>(send.to)];
  double wire_bytes = static_cast<double>(send.bytes) / wire_.bandwidth_efficiency;
  if (network_.topology().node_of_device(src) != network_.topology().node_of_device(dst))
    wire_bytes += static_cast<double>(wire_.nic_overhead_bytes);
  const auto on_wire = static_cast<Bytes>(std::llround(wire_bytes));
  const Time path_latency =
      messages_.send(sim.now(), src, dst, on_wire, static_cast<std::uint64_t>(g), sc.valiant_share).latency;
  if (send.merged_steps > 0) {
    const Time delay = send.merged_steps * (library_.step_latency + path_latency);
    if (delay > Time::zero()) merged_delay_[g] = delay;
  }
  ++results_[c].flows;
  results_[c].bytes += send.bytes;
  results_[c].wire_bytes += on_wire;
}

void ScheduleRunner::receive(Simulation& sim, std::size_t g, Time t) {
  const std::size_t c = schedule_of(g);
  results_[c].end = max(results_[c].end, t);
  for (std::size_t i = dependents_begin_[g]; i < dependents_begin_[g + 1]; ++i) {
    const std::size_t d = dependents_[i];
    if (--waiting_[d] == 0) sim.schedule(t + library_.step_latency, handler_, kSend, d);
  }
  // Receives come in time order: the last one is the schedule's end.
  if (--unreceived_[c] == 0 && on_end_) on_end_(static_cast<int>(c), t);
}

std::size_t ScheduleRunner::schedule_of(std::size_t g) const {
  return static_cast<std::size_t>(std::upper_bound(base_.begin(), base_.end(), g) - base_.begin()) - 1;
}

std::vector<ScheduleResult> run_flow_schedules(FlowNetwork& network, std::vector<FlowSchedule>&& schedules,
                                               const CollectiveLibrary& library, const WireModel& wire) {
  Simulation sim;
  ScheduleRunner runner(sim, network, library, wire);
  for (FlowSchedule& schedule : schedules) runner.add(std::move(schedule));
  schedules.clear();
  sim.run();
  return {runner.results().begin(), runner.results().end()};
}

std::vector<ScheduleResult> run_flow_schedules(FlowNetwork& network, std::span<const FlowSchedule> schedules,
                                               const CollectiveLibrary& library, const WireModel& wire) {
  return run_flow_schedules(network, std::vector<FlowSchedule>(schedules.begin(), schedules.end()), library, wire);
}

}  // namespace ws
