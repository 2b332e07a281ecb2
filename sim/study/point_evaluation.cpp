#include "sim/study/point_evaluation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/analytic/plan.hpp"

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
        plan.over_memory.size(), least.memory.total_bytes() / (1024.0 * 1024.0 * 1024.0),
        to_string(least.layout));
  }
  if (!plan.invalid.empty()) {
    return fmt::format("no valid layout ({} candidates, e.g. {}: {})", plan.invalid.size(),
                       to_string(plan.invalid.front().layout), plan.invalid.front().reason);
  }
  return "no layout";
}

}  // namespace

PointEvaluation evaluate_point_analytic(const Machine& machine, const StudyPoint& point,
                                        const StepOptions& options, int top_k) {
  const Plan plan = plan_layouts(machine, point.model, point.batch, point.devices, options);
  PointEvaluation e;
  e.layouts_fitting = static_cast<int>(plan.ranked.size());
  e.layouts_valid = static_cast<int>(plan.ranked.size() + plan.over_memory.size());
  e.feasible = !plan.ranked.empty();
  if (!e.feasible) e.reason = infeasible_reason(plan);
  const auto kept = std::min(plan.ranked.size(), static_cast<std::size_t>(std::max(top_k, 1)));
  e.candidates.assign(plan.ranked.begin(), plan.ranked.begin() + static_cast<std::ptrdiff_t>(kept));
  return e;
}

StudyEvaluator analytic_evaluator() { return {"analytic", evaluate_point_analytic}; }

}  // namespace ws
