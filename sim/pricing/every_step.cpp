// Every send a sprayed flow, through the schedule executor.
#include "sim/pricing/every_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "base/input_error.hpp"
#include "sim/collectives/flow_schedule.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/traffic.hpp"

namespace ws {

namespace {

// The phases' largest Valiant share: what adaptive routing gives this traffic; one per send keeps
// the reference simple.
double program_valiant_share(const PricedProgram& program) {
  double valiant = 0.0;
  for (const PricedPhase& p : program.phases) valiant = std::max(valiant, p.valiant_share);
  return valiant;
}

// A call's schedules (one per communicator of its kind) start together and it ends with the last
// of them; OrderedPricing keeps MPI's order per communicator.
class EveryStepPricing final : public OrderedPricing {
 public:
  EveryStepPricing(JobNetwork& network, const Layout& layout, Simulation& sim)
      : OrderedPricing(sim),
        network_(network),
        layout_(layout),
        library_(network.machine().collective_libraries.front()),
        flows_(network.topology(), network.capacity()),
        runner_(sim, flows_, library_, wire_model(network.machine(), library_),
                [this](int schedule, Time end) { schedule_ended(schedule, end); }) {}

  CollectiveAlgorithm algorithm(int id) const override { return calls_[static_cast<std::size_t>(id)].algorithm; }

 private:
  struct Call {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
    double valiant = 0.0;  // its program's Valiant share
    std::size_t schedules_left = 0;
  };

  void prepare(int) override { calls_.emplace_back(); }

  void start(int id, Time t) override {
    const CollectiveCall& call = this->call(id);
    Call& c = calls_[static_cast<std::size_t>(id)];
    WS_CHECK(!stage_transfer(id), "the every-step reference is refused for pipelined layouts");
    const GroupGeometry g = geometry(layout_, call.group, call.stage);
    const auto comms = g.size >= 2 ? network_.communicators(g) : std::vector<std::vector<int>>{};
    if (comms.empty()) {
      finish_call(id, t);
      return;
    }
    c.algorithm = choose_algorithm(network_, library_, g, call.op, call.bytes);
    c.valiant = program_valiant_share(network_.program(g, c.algorithm, call.op, call.bytes, false));
    c.schedules_left = comms.size();
    for (const auto& devices : comms) {
      FlowSchedule schedule = build_schedule(c.algorithm, call.op, devices, call.bytes, network_.schedule_options());
      schedule.start = t;
      schedule.valiant_share = c.valiant;
      call_of_schedule_.push_back(id);
      runner_.add(std::move(schedule));
    }
  }

  void schedule_ended(int schedule, Time t) {
    const int id = call_of_schedule_[static_cast<std::size_t>(schedule)];
    if (--calls_[static_cast<std::size_t>(id)].schedules_left == 0) finish_call(id, t);
  }

  JobNetwork& network_;
  Layout layout_;
  const CollectiveLibrary& library_;
  FlowNetwork flows_;
  std::vector<Call> calls_;
  std::vector<int> call_of_schedule_;  // per schedule the runner holds
  ScheduleRunner runner_;
};

}  // namespace

EveryStepResult every_step_collective(JobNetwork& network, GroupGeometry g, CollectiveAlgorithm algorithm,
                                      CollectiveOp op, Bytes bytes, std::uint64_t max_sends) {
  EveryStepResult result;
  const auto comms = network.communicators(g);
  if (comms.empty() || g.size < 2) return result;
  const Machine& machine = network.machine();
  const CollectiveLibrary& library = machine.collective_libraries.front();
  const double valiant = program_valiant_share(network.program(g, algorithm, op, bytes, false));

  std::vector<FlowSchedule> schedules;
  std::uint64_t sends = 0;
  for (const auto& devices : comms) {
    schedules.push_back(build_schedule(algorithm, op, devices, bytes, network.schedule_options()));
    schedules.back().start = Time::zero();
    schedules.back().valiant_share = valiant;
    sends += schedules.back().size();
    if (sends > max_sends) {
      throw InputError(InputLocation{"", 0, "--every-step"}, fmt::format("more than {} sends", sends),
                       fmt::format("at most {:.0f} million sends for the per-send reference (fewer devices, "
                                   "fewer bytes, or the phase model without --every-step)",
                                   static_cast<double>(max_sends) / 1e6));
    }
  }
  FlowNetwork flows(network.topology(), network.capacity());
  const auto results = run_flow_schedules(flows, std::move(schedules), library, wire_model(machine, library));
  for (const ScheduleResult& r : results) {
    result.time = max(result.time, r.end - r.start);
    result.flows += r.flows;
    result.bytes += r.bytes;
  }
  result.delivered = flows.bytes_delivered();
  result.link_bytes.resize(network.topology().links.size());
  for (std::size_t l = 0; l < result.link_bytes.size(); ++l) result.link_bytes[l] = flows.link_bytes_delivered(static_cast<int>(l));
  return result;
}

std::unique_ptr<CollectivePricing> make_every_step_pricing(JobNetwork& network, const Layout& layout, Simulation& sim) {
  if (layout.pipelined())
    throw InputError(InputLocation{"", 0, "--evaluator"}, "every-step",
                     fmt::format("flow or closed-form for the pipelined layout {} (the per-send reference "
                                 "prices layouts without stages)",
                                 to_string(layout)));
  return std::make_unique<EveryStepPricing>(network, layout, sim);
}

}  // namespace ws
