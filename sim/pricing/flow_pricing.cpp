// Calls as chains of shaped flows on one FlowNetwork.
#include "sim/pricing/flow_pricing.hpp"
#include "base/check.hpp"

#include <cmath>

namespace ws {

FlowPricing::FlowPricing(JobNetwork& network, const Layout& layout, Simulation& sim)
    : CollectivePricing(sim),
      network_(network),
      layout_(layout),
      library_(network.machine().collective_libraries.front()),
      nic_overhead_bytes_(network.machine().node.nic_efficiency.half_bandwidth_bytes),
      flows_(network.topology(), std::vector<double>(network.capacity().begin(), network.capacity().end())) {
  flows_.set_memoization(true);
  running_.fill(-1);
  sim.add_model(*this);
}

int FlowPricing::issue(Time now, const CollectiveCall& call) {
  Call c;
  c.call = call;
  c.issued = now;
  const GroupGeometry g = geometry(layout_, call.group);
  if (g.size >= 2) {
    c.algorithm = choose_algorithm(network_, library_, g, call.op, call.bytes);
    c.program = &network_.program(g, c.algorithm, call.op, call.bytes, true);
    c.protocol = fastest_protocol(*c.program, library_, call.bytes, nic_overhead_bytes_);
    for (const PricedPhase& p : c.program->phases) {
      auto [it, fresh] = shapes_.try_emplace(p.links.get(), -1);
      if (fresh) it->second = flows_.add_shape(*p.links);
      c.shapes.push_back(it->second);
    }
  }
  calls_.push_back(std::move(c));
  const int id = static_cast<int>(calls_.size()) - 1;
  const auto group = static_cast<std::size_t>(call.group);
  if (running_[group] < 0) {
    start_call(id, now);
  } else {
    waiting_[group].push_back(id);
  }
  return id;
}

void FlowPricing::start_call(int id, Time t) {
  Call& c = calls_[static_cast<std::size_t>(id)];
  running_[static_cast<std::size_t>(c.call.group)] = id;
  if (c.program == nullptr || c.program->phases.empty()) {
    end_call(id, t);
    return;
  }
  start_phase(id, t);
}

void FlowPricing::start_phase(int id, Time t) {
  const Call& c = calls_[static_cast<std::size_t>(id)];
  const PricedPhase& p = c.program->phases[c.phase];
  const CollectiveLibrary library = protocol_variant(library_, c.protocol);
  const double progress = phase_wire_bytes(p, library, c.call.bytes, nic_overhead_bytes_);
  // Pipelined steps hide part of their latency behind the phase's transfer as it would run alone.
  Time latency = unhidden_latency(library, phase_latency(*c.program, p, library, c.call.bytes),
                                  Time::from_seconds(progress * p.seconds_per_byte));
  if (c.phase == 0) latency += call_latency(*c.program, library);
  const auto delivered = static_cast<Bytes>(std::llround(progress * p.transfer_weight));
  flows_.start_shaped_flow(t, c.shapes[c.phase], latency, progress, delivered, static_cast<std::uint64_t>(id));
}

void FlowPricing::end_call(int id, Time t) {
  Call& c = calls_[static_cast<std::size_t>(id)];
  c.done = true;
  c.end = t;
  for (const auto& [handler, what] : c.waiters) sim_.schedule(t, handler, what, static_cast<std::uint64_t>(id));
  c.waiters.clear();
  const auto group = static_cast<std::size_t>(c.call.group);
  running_[group] = -1;
  if (!waiting_[group].empty()) {
    const int next = waiting_[group].front();
    waiting_[group].pop_front();
    start_call(next, max(t, calls_[static_cast<std::size_t>(next)].issued));
  }
}

void FlowPricing::advance(Simulation&, Time t) {
  completed_.clear();
  flows_.advance(t, completed_);
  for (const CompletedFlow& f : completed_) {
    const int id = static_cast<int>(f.tag);
    Call& c = calls_[static_cast<std::size_t>(id)];
    if (++c.phase < c.program->phases.size()) {
      start_phase(id, f.end);
    } else {
      end_call(id, f.end);
    }
  }
}

std::optional<Time> FlowPricing::end(int id) const {
  const Call& c = calls_[static_cast<std::size_t>(id)];
  return c.done ? std::optional<Time>(c.end) : std::nullopt;
}

void FlowPricing::notify_end(int id, int handler, std::uint32_t what) {
  Call& c = calls_[static_cast<std::size_t>(id)];
  if (c.done) {
    sim_.schedule(max(sim_.now(), c.end), handler, what, static_cast<std::uint64_t>(id));
  } else {
    c.waiters.emplace_back(handler, what);
  }
}

}  // namespace ws
