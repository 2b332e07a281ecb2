// Calls as chains of shaped flows on one FlowNetwork.
#include "sim/pricing/flow_pricing.hpp"
#include "base/check.hpp"

#include <cmath>

namespace ws {

FlowPricing::FlowPricing(JobNetwork& network, const Layout& layout, Simulation& sim)
    : OrderedPricing(sim),
      network_(network),
      layout_(layout),
      library_(network.machine().collective_libraries.front()),
      nic_overhead_bytes_(network.machine().node.nic_efficiency.half_bandwidth_bytes),
      flows_(network.topology(), network.capacity()) {
  flows_.set_memoization(true);
  sim.add_model(*this);
}

void FlowPricing::prepare(int id) {
  const CollectiveCall& call = this->call(id);
  Call c;
  if (const auto& transfer = stage_transfer(id)) {
    c.program = &network_.stage_transfer(transfer->from, transfer->to, layout_, true);
    c.protocol = fastest_protocol(*c.program, library_, transfer->bytes, nic_overhead_bytes_);
    const PricedPhase& p = c.program->phases.front();
    auto [it, fresh] = shapes_.try_emplace(p.links.get(), -1);
    if (fresh) it->second = flows_.add_shape(*p.links);
    c.shapes.push_back(it->second);
    calls_.push_back(std::move(c));
    return;
  }
  const GroupGeometry g = geometry(layout_, call.group, call.stage);
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
}

void FlowPricing::start(int id, Time t) {
  const Call& c = calls_[static_cast<std::size_t>(id)];
  if (c.program == nullptr || c.program->phases.empty()) {
    finish_call(id, t);
    return;
  }
  start_phase(id, t);
}

void FlowPricing::start_phase(int id, Time t) {
  const Call& c = calls_[static_cast<std::size_t>(id)];
  const Bytes bytes = stage_transfer(id) ? stage_transfer(id)->bytes : call(id).bytes;
  const PricedPhase& p = c.program->phases[c.phase];
  const CollectiveLibrary library = protocol_variant(library_, c.protocol);
  const double progress = phase_wire_bytes(p, library, bytes, nic_overhead_bytes_);
  // Pipelined steps hide part of their latency behind the phase's transfer as it would run alone.
  Time latency = unhidden_latency(library, phase_latency(*c.program, p, library, bytes),
                                  transfer_time(progress, p.time_per_byte));
  if (c.phase == 0) latency += call_latency(*c.program, library);
  const auto delivered = static_cast<Bytes>(std::llround(progress * p.transfer_weight));
  flows_.start_shaped_flow(t, c.shapes[c.phase], latency, progress, delivered, static_cast<std::uint64_t>(id));
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
      finish_call(id, f.end);
    }
  }
}

}  // namespace ws
