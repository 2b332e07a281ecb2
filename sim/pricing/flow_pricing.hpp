// The flow model of a step's collectives: one FlowNetwork for the whole job. A call's current
// phase is one shaped flow carrying every transfer of every communicator of its kind (symmetric
// communicators solved once, with link multiplicities); ring steps whose rates cannot change are
// one flow, advanced in one event; the rates of a repeated set of phases in flight come from the
// network's memo. Calls on one communicator run in issue order.
#pragma once

#include <array>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "sim/net/flow_network.hpp"
#include "sim/pricing/collective_pricing.hpp"

namespace ws {

// On the kernel, the network is a model: its completions end phases and calls, and a call's end is
// an event for whoever waits for it.
class FlowPricing final : public OrderedPricing, public TimedModel {
 public:
  FlowPricing(JobNetwork& network, const Layout& layout, Simulation& sim);

  CollectiveAlgorithm algorithm(int id) const override { return calls_[static_cast<std::size_t>(id)].algorithm; }

  Time next_event_time() override { return flows_.next_event_time(); }
  void advance(Simulation& sim, Time t) override;

  const FlowNetwork& flows() const { return flows_; }

 private:
  // What the flow model keeps per call (OrderedPricing keeps its order and end).
  struct Call {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
    const PricedProgram* program = nullptr;
    std::vector<int> shapes;  // FlowNetwork shape of each phase
    int protocol = kOwnProtocol;  // which of the library's protocols runs it (fastest_protocol)
    std::size_t phase = 0;
  };
  void prepare(int id) override;
  void start(int id, Time t) override;
  void start_phase(int id, Time t);

  JobNetwork& network_;
  Layout layout_;
  const CollectiveLibrary& library_;
  Bytes nic_overhead_bytes_ = 0;
  FlowNetwork flows_;
  std::map<const std::vector<LinkShare>*, int> shapes_;  // FlowNetwork shape of each phase's links
  std::vector<Call> calls_;
  std::vector<CompletedFlow> completed_;
};

}  // namespace ws
