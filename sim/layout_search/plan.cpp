#include "sim/layout_search/plan.hpp"

#include <algorithm>
#include <string>

#include "base/input_error.hpp"
#include "base/ordered_tasks.hpp"

#include <memory>
#include <optional>

namespace ws {

Plan plan_layouts(const Machine& machine, const ModelSpec& model, const Batch& batch, int devices,
                  const StepOptions& options, std::span<const Strategy> strategies) {
  if (devices < 1 || devices > machine.total_devices()) {
    throw InputError(
        {machine.source_file, 0, "devices"}, std::to_string(devices),
        "a device count from 1 to " + std::to_string(machine.total_devices()) + " (" + machine.name + ")");
  }
  // One job network for every layout: placement, topology and priced group programs are shared.
  JobNetwork network(machine, devices, options.allocation, 1, options.ranks_per_node);
  return plan_layouts(network, model, batch, options, strategies);
}

namespace {

// Megatron-LM's other rank order (order=tp-pp-dp, stages inside the data ranks) moves where the
// groups and stage transfers sit, not the step's work: it is priced for the fastest this many
// layouts it can change (pipelined, with data parallelism), beside their default order, rather than
// for every layout (which would double the pipelined ones, the plan's costliest).
constexpr std::size_t kRankOrderCandidates = 16;

}  // namespace

Plan plan_layouts(JobNetwork& network, const ModelSpec& model, const Batch& batch, const StepOptions& options,
                  std::span<const Strategy> strategies, int jobs) {
  Plan plan;
  std::vector<LayoutCandidate> candidates;
  for (const Strategy s : strategies) {
    std::vector<LayoutCandidate> more =
        enumerate_strategy_layouts(model, batch, network.devices(), s, network.ranks_on_a_node());
    candidates.insert(candidates.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  plan.ranked.reserve(candidates.size());
  // Workers beyond the first price on job networks of their own: a network's caches are not shared.
  std::vector<std::unique_ptr<JobNetwork>> own(static_cast<std::size_t>(std::max(jobs, 1)));
  auto network_of = [&](int worker) -> JobNetwork& {
    if (worker == 0) return network;
    auto& n = own[static_cast<std::size_t>(worker)];
    if (!n) n = std::make_unique<JobNetwork>(network.machine(), network.devices(), network.allocation(), 1,
                                               network.ranks_per_node());
    return *n;
  };
  // Prices the candidates into the plan's lists, in candidate order.
  auto price = [&](std::vector<LayoutCandidate>& batch_of) {
    std::vector<std::optional<LayoutEstimate>> estimates(batch_of.size());
    for_each_ordered<std::optional<LayoutEstimate>>(
        batch_of.size(), jobs,
        [&](std::size_t i, int worker) -> std::optional<LayoutEstimate> {
          if (!batch_of[i].valid) return std::nullopt;
          return estimate_step(network_of(worker), model, batch, batch_of[i].layout, options);
        },
        [&](std::size_t i, std::optional<LayoutEstimate>&& e) { estimates[i] = std::move(e); });
    for (std::size_t i = 0; i < batch_of.size(); ++i) {
      LayoutCandidate& c = batch_of[i];
      if (!c.valid) {
        plan.invalid.push_back(std::move(c));
        continue;
      }
      LayoutEstimate est = std::move(*estimates[i]);
      // A step past Time's range (106 days) saturates instead of wrapping; it is still no answer:
      // say which inputs make it so rather than rank it.
      if (est.step.total().saturated()) {
        const Machine& machine = network.machine();
        throw InputError({machine.source_file, 0, "device.peak"}, machine.device.name,
                         "rates that give a step time below 106 days; layout " + to_string(c.layout) + " of " +
                             model.name + " on " + std::to_string(network.devices()) + " devices of " + machine.name +
                             " takes longer: the model is far too large for this machine, or the machine's device "
                             "peak, GEMM efficiencies or link bandwidths are far too low");
      }
      (est.fits_memory ? plan.ranked : plan.over_memory).push_back(est);
    }
  };
  // Candidates come in layout order, so a stable sort breaks ties by layout order.
  auto faster = [](const LayoutEstimate& a, const LayoutEstimate& b) {
    return a.step.total() < b.step.total();
  };
  auto sort = [&] {
    std::stable_sort(plan.ranked.begin(), plan.ranked.end(), faster);
    std::stable_sort(plan.over_memory.begin(), plan.over_memory.end(), faster);
  };
  price(candidates);
  sort();
  std::vector<LayoutCandidate> reordered;
  for (const LayoutEstimate& e : plan.ranked) {
    if (reordered.size() == kRankOrderCandidates) break;
    const Layout& l = e.layout;
    if (l.strategy != Strategy::megatron || l.pipeline == 1 || l.data == 1 || l.order != RankOrder::stages_outermost)
      continue;
    LayoutCandidate c{l, true, {}};
    c.layout.order = RankOrder::stages_inside_data;
    reordered.push_back(std::move(c));
  }
  if (!reordered.empty()) {
    price(reordered);
    sort();
  }
  return plan;
}

}  // namespace ws
