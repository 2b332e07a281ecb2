// Every send a sprayed flow, through the schedule executor.
#include "sim/pricing/every_step.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "base/input_error.hpp"
#include "sim/collectives/flow_schedule.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/traffic.hpp"

namespace ws {

EveryStepResult every_step_collective(JobNetwork& network, GroupGeometry g, CollectiveAlgorithm algorithm,
                                      CollectiveOp op, Bytes bytes, std::uint64_t max_sends) {
  EveryStepResult result;
  const auto comms = network.communicators(g);
  if (comms.empty() || g.size < 2) return result;
  const Machine& machine = network.machine();
  const CollectiveLibrary& library = machine.collective_libraries.front();
  const PricedProgram& program = network.program(g, algorithm, op, bytes, false);
  // The Valiant share of the whole program (its phases' largest): what adaptive routing gives this
  // traffic; one per send keeps the reference simple.
  double valiant = 0.0;
  for (const PricedPhase& p : program.phases) valiant = std::max(valiant, p.valiant_share);

  std::vector<FlowSchedule> schedules;
  std::uint64_t sends = 0;
  for (const auto& devices : comms) {
    schedules.push_back(build_schedule(algorithm, op, devices, bytes, network.schedule_options()));
    schedules.back().start = Time::zero();
    sends += schedules.back().size();
    if (sends > max_sends) {
      throw InputError(InputLocation{"", 0, "--every-step"}, fmt::format("more than {} sends", sends),
                       fmt::format("at most {:.0f} million sends for the per-send reference (fewer devices, "
                                   "fewer bytes, or the phase model without --every-step)",
                                   static_cast<double>(max_sends) / 1e6));
    }
  }
  const auto capacity = network.capacity();
  FlowNetwork flows(network.topology(), std::vector<double>(capacity.begin(), capacity.end()));
  TrafficRouter router(network.topology());
  std::map<std::pair<int, int>, std::pair<int, Time>> shapes;  // (src, dst) -> (shape, latency)
  const StartSend start = [&](FlowNetwork& net, Time at, int src, int dst, Bytes wire, std::uint64_t tag) {
    auto [it, fresh] = shapes.try_emplace({src, dst});
    if (fresh) {
      const TrafficDemand demand{src, dst, 1.0};
      const TrafficLoads loads = router.route({&demand, 1}, valiant > 0.0);
      const Time latency = Time::from_ps(static_cast<std::int64_t>(
          (1.0 - valiant) * static_cast<double>(loads.minimal_latency.ps()) +
          valiant * static_cast<double>(loads.valiant_latency.ps())));
      it->second = {net.add_shape(mix_routes(loads, valiant)), latency};
    }
    const auto [shape, latency] = it->second;
    return std::make_pair(net.start_shaped_flow(at, shape, latency, static_cast<double>(wire), wire, tag), latency);
  };
  const auto results = run_flow_schedules(flows, schedules, library, wire_model(machine, library), start);
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

}  // namespace ws
