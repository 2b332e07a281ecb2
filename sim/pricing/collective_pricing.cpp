// Algorithm choice, the closed form of a program, and the closed-form pricing of a step's calls.
#include "sim/pricing/collective_pricing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/pricing/every_step.hpp"
#include "sim/pricing/flow_pricing.hpp"
#include "base/check.hpp"

namespace ws {

const char* to_string(CollectiveModel model) {
  switch (model) {
    case CollectiveModel::flow:
      return "flow";
    case CollectiveModel::every_step:
      return "every-step";
    case CollectiveModel::closed_form:
      break;
  }
  return "closed-form";
}

std::optional<CollectiveModel> parse_collective_model(std::string_view text) {
  if (text == "flow") return CollectiveModel::flow;
  if (text == "closed-form") return CollectiveModel::closed_form;
  if (text == "every-step") return CollectiveModel::every_step;
  return std::nullopt;
}

namespace {

const CollectiveLibrary& default_library(const Machine& machine) {
  WS_CHECK(!machine.collective_libraries.empty(), "the machine loader guarantees a collective library");
  return machine.collective_libraries.front();
}

bool thresholds_cover(const CollectiveLibrary& library, int nodes) {
  return !library.tree_thresholds.empty() && nodes >= library.tree_thresholds.front().nodes &&
         nodes <= library.tree_thresholds.back().nodes;
}

}  // namespace

Time call_latency(const PricedProgram& program, const CollectiveLibrary& library) {
  return library.launch_latency + library.setup_latency_per_member * program.members;
}

double channel_concentration(const PricedPhase& phase, const CollectiveLibrary& library, Bytes bytes) {
  if (library.bytes_per_channel <= 0 || phase.channels <= 1) return 1.0;
  // A rank's chunk per step, over all the phase's channels, and how many channels carry it.
  const double chunk = phase.bytes_fraction * static_cast<double>(bytes) / phase.steps * phase.channels;
  const double used = std::clamp(std::floor(chunk / static_cast<double>(library.bytes_per_channel)), 1.0,
                                 static_cast<double>(phase.channels));
  return phase.channels / used;
}

Time phase_latency(const PricedProgram& program, const PricedPhase& phase, const CollectiveLibrary& library,
                   Bytes bytes) {
  // The phase's largest transfer per step: one message.
  const double message_bytes = phase.bytes_fraction * static_cast<double>(bytes) / phase.steps;
  return phase.steps * (library.step_latency + phase.path_latency + eager_step_overhead(library, message_bytes) +
                        large_job_step_overhead(library, program.op, program.nodes, message_bytes));
}

Time unhidden_latency(const CollectiveLibrary& library, Time latency, Time transfer) {
  if (library.step_overlap == StepOverlap::serial || transfer <= Time::zero()) return latency;
  const double l = latency.seconds(), t = transfer.seconds();
  return Time::from_seconds(std::sqrt(l * l + t * t) - t);
}

double phase_wire_bytes(const PricedPhase& phase, const CollectiveLibrary& library, Bytes bytes,
                        Bytes nic_overhead_bytes) {
  return phase.bytes_fraction * static_cast<double>(bytes) * channel_concentration(phase, library, bytes) /
             library.bandwidth_efficiency +
         (phase.inter_node ? phase.steps * static_cast<double>(nic_overhead_bytes) : 0.0);
}

Time phase_time(const PricedProgram& program, const PricedPhase& phase, const CollectiveLibrary& library,
                Bytes bytes, Bytes nic_overhead_bytes) {
  const Time transfer =
      transfer_time(phase_wire_bytes(phase, library, bytes, nic_overhead_bytes), phase.time_per_byte);
  return unhidden_latency(library, phase_latency(program, phase, library, bytes), transfer) + transfer;
}

namespace {

Time one_protocol_time(const PricedProgram& program, const CollectiveLibrary& library, Bytes bytes,
                       Bytes nic_overhead_bytes) {
  Time total = call_latency(program, library);
  for (const PricedPhase& p : program.phases) total += phase_time(program, p, library, bytes, nic_overhead_bytes);
  return total;
}

}  // namespace

namespace {

struct ProtocolChoice {
  int protocol = kOwnProtocol;
  Time time;
};

// Each protocol priced once; the fastest and its time (a tie goes to the earlier).
ProtocolChoice choose_protocol(const PricedProgram& program, const CollectiveLibrary& library, Bytes bytes,
                               Bytes nic_overhead_bytes) {
  ProtocolChoice best{kOwnProtocol, one_protocol_time(program, library, bytes, nic_overhead_bytes)};
  if (library.protocols.empty()) return best;
  // One copy of the library, given each protocol's terms in turn (protocol_variant, without a
  // copy per protocol: this runs for every program priced).
  CollectiveLibrary variant = library;
  for (std::size_t i = 0; i < library.protocols.size(); ++i) {
    const int p = static_cast<int>(i);
    use_protocol_terms(variant, library.protocols[i]);
    const Time t = one_protocol_time(program, variant, bytes, nic_overhead_bytes);
    if (t < best.time) best = {p, t};
  }
  return best;
}

}  // namespace

int fastest_protocol(const PricedProgram& program, const CollectiveLibrary& library, Bytes bytes,
                     Bytes nic_overhead_bytes) {
  return choose_protocol(program, library, bytes, nic_overhead_bytes).protocol;
}

Time program_time(const PricedProgram& program, const CollectiveLibrary& library, Bytes bytes,
                  Bytes nic_overhead_bytes) {
  if (program.phases.empty()) return Time::zero();
  return choose_protocol(program, library, bytes, nic_overhead_bytes).time;
}

CollectiveAlgorithm choose_algorithm(JobNetwork& network, const CollectiveLibrary& library, GroupGeometry g,
                                     CollectiveOp op, Bytes bytes) {
  const int nodes = network.nodes_spanned(g);
  if (g.size < 2) return CollectiveAlgorithm::ring;
  if (collective_family(library) != CollectiveFamily::nccl || op != CollectiveOp::all_reduce ||
      thresholds_cover(library, nodes)) {
    return select_algorithm(library, op, bytes, g.size, nodes);
  }
  const Bytes h = network.machine().node.nic_efficiency.half_bandwidth_bytes;
  const Time ring = program_time(network.program(g, CollectiveAlgorithm::ring, op, bytes, false), library, bytes, h);
  const Time tree = program_time(network.program(g, CollectiveAlgorithm::tree, op, bytes, false), library, bytes, h);
  return tree < ring ? CollectiveAlgorithm::tree : CollectiveAlgorithm::ring;
}

namespace {

struct PricedAlone {
  Time time;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
};

// A call on its own: the library's algorithm for it, and the time of that algorithm's program.
PricedAlone price_alone(JobNetwork& network, const Layout& layout, const CollectiveCall& call) {
  const GroupGeometry g = geometry(layout, call.group, call.stage);
  if (g.size < 2) return {};
  const CollectiveLibrary& library = default_library(network.machine());
  const CollectiveAlgorithm algorithm = choose_algorithm(network, library, g, call.op, call.bytes);
  return {program_time(network.program(g, algorithm, call.op, call.bytes, false), library, call.bytes,
                       network.machine().node.nic_efficiency.half_bandwidth_bytes),
          algorithm};
}

}  // namespace

Time collective_time(JobNetwork& network, const Layout& layout, const CollectiveCall& call) {
  return price_alone(network, layout, call).time;
}

Time stage_transfer_time(JobNetwork& network, const Layout& layout, const StageTransfer& transfer) {
  const CollectiveLibrary& library = default_library(network.machine());
  const PricedProgram& program = network.stage_transfer(transfer.from, transfer.to, layout, false);
  return program_time(program, library, transfer.bytes, network.machine().node.nic_efficiency.half_bandwidth_bytes);
}

namespace {

// Each call alone, queued behind the previous call on its communicator.
class ClosedFormPricing final : public CollectivePricing {
 public:
  ClosedFormPricing(JobNetwork& network, const Layout& layout, Simulation& sim)
      : CollectivePricing(sim), network_(network), layout_(layout) {}

  int issue(Time now, const CollectiveCall& call) override {
    const auto g = static_cast<std::size_t>(call.stage) * kStepGroups + static_cast<std::size_t>(call.group);
    const auto key = std::make_tuple(static_cast<int>(call.group), static_cast<int>(call.op), call.bytes, call.stage);
    auto it = priced_.find(key);
    if (it == priced_.end()) it = priced_.emplace(key, price_alone(network_, layout_, call)).first;
    if (free_.size() <= g) free_.resize(g + 1);
    const Time start = max(now, free_[g]);
    free_[g] = start + it->second.time;
    calls_.push_back({free_[g], it->second.algorithm});
    return static_cast<int>(calls_.size()) - 1;
  }
  int transfer(Time now, const StageTransfer& transfer) override {
    const auto key = std::make_tuple(transfer.from, transfer.to, transfer.bytes);
    auto it = transfers_.find(key);
    if (it == transfers_.end()) it = transfers_.emplace(key, stage_transfer_time(network_, layout_, transfer)).first;
    calls_.push_back({now + it->second, CollectiveAlgorithm::ring});
    return static_cast<int>(calls_.size()) - 1;
  }
  std::optional<Time> end(int id) const override { return calls_[static_cast<std::size_t>(id)].first; }
  void notify_end(int id, int handler, std::uint32_t what) override {
    sim_.schedule(max(sim_.now(), calls_[static_cast<std::size_t>(id)].first), handler, what,
                  static_cast<std::uint64_t>(id));
  }
  CollectiveAlgorithm algorithm(int id) const override { return calls_[static_cast<std::size_t>(id)].second; }

 private:
  JobNetwork& network_;
  Layout layout_;
  std::map<std::tuple<int, int, Bytes, int>, PricedAlone> priced_;
  std::map<std::tuple<int, int, Bytes>, Time> transfers_;
  std::vector<Time> free_;  // per stage x kStepGroups + group: when its communicator is free
  std::vector<std::pair<Time, CollectiveAlgorithm>> calls_;
};

}  // namespace

OrderedPricing::OrderedPricing(Simulation& sim) : CollectivePricing(sim) {}

std::size_t OrderedPricing::communicator(const CollectiveCall& call) {
  const std::size_t c = static_cast<std::size_t>(call.stage) * kStepGroups + static_cast<std::size_t>(call.group);
  if (running_.size() <= c) {
    running_.resize(c + 1, -1);
    waiting_.resize(c + 1);
  }
  return c;
}

int OrderedPricing::transfer(Time now, const StageTransfer& transfer) {
  Call c;
  c.transfer = transfer;
  c.issued = now;
  calls_.push_back(std::move(c));
  const int id = static_cast<int>(calls_.size()) - 1;
  prepare(id);
  start(id, now);
  return id;
}

int OrderedPricing::issue(Time now, const CollectiveCall& call) {
  Call c;
  c.call = call;
  c.issued = now;
  calls_.push_back(std::move(c));
  const int id = static_cast<int>(calls_.size()) - 1;
  prepare(id);
  const std::size_t group = communicator(call);
  if (running_[group] < 0) {
    running_[group] = id;
    start(id, now);
  } else {
    waiting_[group].push_back(id);
  }
  return id;
}

std::optional<Time> OrderedPricing::end(int id) const {
  const Call& c = calls_[static_cast<std::size_t>(id)];
  return c.done ? std::optional<Time>(c.end) : std::nullopt;
}

void OrderedPricing::notify_end(int id, int handler, std::uint32_t what) {
  Call& c = calls_[static_cast<std::size_t>(id)];
  if (c.done) {
    sim_.schedule(max(sim_.now(), c.end), handler, what, static_cast<std::uint64_t>(id));
  } else {
    c.waiters.emplace_back(handler, what);
  }
}

void OrderedPricing::finish_call(int id, Time t) {
  Call& c = calls_[static_cast<std::size_t>(id)];
  c.done = true;
  c.end = t;
  for (const auto& [handler, what] : c.waiters) sim_.schedule(t, handler, what, static_cast<std::uint64_t>(id));
  c.waiters.clear();
  if (c.transfer) return;
  const std::size_t group = communicator(c.call);
  running_[group] = -1;
  if (!waiting_[group].empty()) {
    const int next = waiting_[group].front();
    waiting_[group].pop_front();
    running_[group] = next;
    start(next, max(t, calls_[static_cast<std::size_t>(next)].issued));
  }
}

Time CollectivePricing::finish(int id) {
  sim_.run_until([&] { return end(id).has_value(); });
  const std::optional<Time> t = end(id);
  WS_CHECK(t.has_value(), "an issued call ends once the kernel has nothing left to run");
  return *t;
}

std::unique_ptr<CollectivePricing> make_pricing(CollectiveModel model, JobNetwork& network, const Layout& layout,
                                                Simulation& sim) {
  if (model == CollectiveModel::flow) return std::make_unique<FlowPricing>(network, layout, sim);
  if (model == CollectiveModel::every_step) return make_every_step_pricing(network, layout, sim);
  return std::make_unique<ClosedFormPricing>(network, layout, sim);
}

}  // namespace ws
