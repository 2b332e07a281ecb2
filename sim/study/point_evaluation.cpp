#include "sim/study/point_evaluation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "sim/layout_search/plan.hpp"
#include "base/input_error.hpp"
#include "sim/step/simulated_step.hpp"

namespace ws {
namespace {

std::string infeasible_reason(const Plan& plan) {
  if (!plan.over_memory.empty()) {
    const auto& least = *std::min_element(
        plan.over_memory.begin(), plan.over_memory.end(),
        [](const auto& a, const auto& b) { return a.memory.total_bytes() < b.memory.total_bytes(); });
    return fmt::format(
        "no valid layout fits in device memory ({} valid; smallest needs {:.1f} GiB "
        "with {})",
        plan.over_memory.size(), to_gib(least.memory.total_bytes()),
        to_string(least.layout));
  }
  if (!plan.invalid.empty()) {
    return fmt::format("no valid layout ({} candidates, e.g. {}: {})", plan.invalid.size(),
                       to_string(plan.invalid.front().layout), plan.invalid.front().reason);
  }
  return "no layout";
}

}  // namespace

// A point that pins its layout prices that layout alone (checked valid when the spec was read).
PointEvaluation evaluate_pinned(JobNetwork& network, const StudyPoint& point, const StepOptions& options) {
  const LayoutEstimate e = estimate_step(network, point.model, point.batch, *point.layout, options);
  PointEvaluation p;
  p.layouts_valid = 1;
  p.layouts_fitting = e.fits_memory ? 1 : 0;
  p.feasible = e.fits_memory;
  if (p.feasible) {
    p.candidates.push_back(e);
  } else {
    p.reason = fmt::format("the point's layout {} does not fit in device memory (needs {:.1f} GiB)",
                           to_string(e.layout), to_gib(e.memory.total_bytes()));
  }
  return p;
}

namespace {

// The priced point's first top_k layouts with its counts.
PointEvaluation evaluation_of(const PricedPoint& priced, int top_k) {
  const Plan& plan = priced.plan;
  PointEvaluation e;
  e.layouts_fitting = static_cast<int>(priced.fitting);
  e.layouts_valid = static_cast<int>(priced.fitting + plan.over_memory.size());
  e.feasible = priced.fitting > 0;
  if (!e.feasible) e.reason = infeasible_reason(plan);
  const auto kept = std::min(plan.ranked.size(), static_cast<std::size_t>(std::max(top_k, 1)));
  e.candidates.assign(plan.ranked.begin(), plan.ranked.begin() + static_cast<std::ptrdiff_t>(kept));
  return e;
}

}  // namespace

JobNetwork& point_network(const Machine& machine, const StudyPoint& point, const StepOptions& options,
                          JobNetworks* networks, std::optional<JobNetwork>& own) {
  if (point.devices < 1 || point.devices > machine.total_devices()) {
    throw InputError({machine.source_file, 0, "devices"}, std::to_string(point.devices),
                     "a device count from 1 to " + std::to_string(machine.total_devices()) + " (" + machine.name + ")");
  }
  if (networks != nullptr) return networks->get(machine, point.devices, options.allocation, options.ranks_per_node);
  return own.emplace(machine, point.devices, options.allocation, 1, options.ranks_per_node);
}

PointEvaluation evaluate_point_analytic(const Machine& machine, const StudyPoint& point,
                                        const StepOptions& options, int top_k, JobNetworks* networks) {
  std::optional<JobNetwork> own;
  JobNetwork& network = point_network(machine, point, options, networks, own);
  if (point.layout) return evaluate_pinned(network, point, options);
  return evaluation_of(price_point(network, point, options), top_k);
}

StudyEvaluator closed_form_evaluator() {
  return {to_string(CollectiveModel::closed_form), [] {
            auto networks = std::make_shared<JobNetworks>();
            return PointEvaluator([networks](const Machine& machine, const StudyPoint& point, const StepOptions& options,
                                             int top_k) {
              return evaluate_point_analytic(machine, point, options, top_k, networks.get());
            });
          }};
}

namespace {

// The closed-form estimate of a layout with its step replaced by the simulated one; flops and
// memory are the same either way, so the rates follow from the new step time.
LayoutEstimate with_simulated_step(const LayoutEstimate& analytic, const SimulatedStep& simulated) {
  LayoutEstimate e = analytic;
  e.step = breakdown_of(simulated);
  e.analytic_step = analytic.step.total();
  e.isolated = analytic.step;
  const double rescale = analytic.step.total().seconds() / e.step.total().seconds();
  e.sustained_flops_per_s *= rescale;
  e.hardware_peak_fraction *= rescale;
  e.model_peak_fraction *= rescale;
  return e;
}

}  // namespace

LayoutEstimate simulate_candidate(JobNetwork& network, const StudyPoint& point, const StepOptions& options,
                                  const LayoutEstimate& candidate, CollectiveModel collectives) {
  const std::vector<StepSchedule> stages = machine_stage_schedules(network.machine(), point.model, candidate.layout,
                                                                   point.batch.sequences, options, OpNames::none);
  return with_simulated_step(candidate, simulate_schedules(network, stages, options, false, collectives));
}

void rerank_simulated(PricedPoint& priced, JobNetwork& network, const StudyPoint& point, const StepOptions& options,
                      int simulated, CollectiveModel collectives) {
  std::vector<LayoutEstimate>& ranked = priced.plan.ranked;
  ranked.resize(std::min(ranked.size(), static_cast<std::size_t>(std::max(simulated, 0))));
  for (LayoutEstimate& c : ranked) c = simulate_candidate(network, point, options, c, collectives);
  // Ties keep the analytic order.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const LayoutEstimate& a, const LayoutEstimate& b) { return a.step.total() < b.step.total(); });
}

PricedPoint price_point(JobNetwork& network, const StudyPoint& point, const StepOptions& options, int simulated,
                        CollectiveModel collectives, int jobs) {
  PricedPoint priced{plan_layouts(network, point.model, point.batch, options, point.strategies, jobs), 0};
  priced.fitting = priced.plan.ranked.size();
  if (simulated > 0) rerank_simulated(priced, network, point, options, simulated, collectives);
  return priced;
}

PointEvaluation evaluate_point_simulated(const Machine& machine, const StudyPoint& point,
                                         const StepOptions& options, int top_k, int simulated,
                                         JobNetworks* networks, CollectiveModel collectives) {
  std::optional<JobNetwork> own;
  JobNetwork& network = point_network(machine, point, options, networks, own);
  if (!point.layout) {
    return evaluation_of(price_point(network, point, options, std::max({top_k, simulated, 1}), collectives), top_k);
  }
  PointEvaluation e = evaluate_pinned(network, point, options);
  for (LayoutEstimate& c : e.candidates) c = simulate_candidate(network, point, options, c, collectives);
  return e;
}

StudyEvaluator flow_evaluator(int simulated) {
  return {fmt::format("{} top {}", to_string(CollectiveModel::flow), simulated), [simulated] {
            auto networks = std::make_shared<JobNetworks>();
            return PointEvaluator([simulated, networks](const Machine& machine, const StudyPoint& point,
                                                        const StepOptions& options, int top_k) {
              return evaluate_point_simulated(machine, point, options, top_k, simulated, networks.get());
            });
          }};
}

}  // namespace ws
