#include "sim/study/point_plan.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/study/point_evaluation.hpp"

namespace ws {
namespace {

std::optional<std::size_t> rank_in(const std::vector<LayoutEstimate>& estimates, const Layout& layout) {
  const auto it = std::find_if(estimates.begin(), estimates.end(),
                               [&](const LayoutEstimate& e) { return e.layout == layout; });
  if (it == estimates.end()) return std::nullopt;
  return static_cast<std::size_t>(it - estimates.begin());
}

// The asked layout's closed-form estimate and rank in `plan`, or why it cannot run. A layout that
// is not among the enumerated ones (a pipelined one, or one of a strategy not ranked) is priced
// here, and its rank is where it would stand.
AskedLayout closed_form_asked(JobNetwork& network, const StudyPoint& point, const StepOptions& step, const Plan& plan,
                              const Layout& asked) {
  AskedLayout row;
  for (const LayoutCandidate& c : plan.invalid) {
    if (c.layout == asked) {
      row.problem = c.reason;
      return row;
    }
  }
  if (const auto rank = rank_in(plan.ranked, asked)) {
    row.closed_form_rank = rank;
    row.estimate = plan.ranked[*rank];
    return row;
  }
  if (const auto over = rank_in(plan.over_memory, asked)) {
    row.estimate = plan.over_memory[*over];
    return row;
  }
  row.problem = layout_problem(point.model, point.batch, asked);
  if (!row.problem.empty()) return row;
  row.estimate = estimate_step(network, point.model, point.batch, asked, step);
  if (row.estimate.fits_memory) {
    row.closed_form_rank = static_cast<std::size_t>(std::count_if(
        plan.ranked.begin(), plan.ranked.end(),
        [&](const LayoutEstimate& e) { return e.step.total() < row.estimate.step.total(); }));
  }
  return row;
}

}  // namespace

PointPlan plan_point(const Machine& machine, const StudyPoint& point, const StepOptions& step,
                     const PointPlanOptions& options) {
  std::optional<JobNetwork> own;
  JobNetwork& network = point_network(machine, point, step, nullptr, own);
  PointPlan p;
  // The closed form first: the asked layout's rank is among all the fitting layouts.
  StudyPoint ranked_point = point;
  ranked_point.strategies = options.strategies;
  PricedPoint priced = price_point(network, ranked_point, step, 0, CollectiveModel::flow, options.jobs);
  p.fitting = priced.fitting;
  p.strategies = options.strategies != std::vector<Strategy>{Strategy::four_d};
  if (options.asked) {
    p.asked = closed_form_asked(network, point, step, priced.plan, *options.asked);
    // A pipelined layout is not among the enumerated ones: it fits beside them.
    if (p.asked->closed_form_rank && !rank_in(priced.plan.ranked, *options.asked)) ++p.fitting;
  }
  const bool simulate = options.evaluator != CollectiveModel::closed_form && !priced.plan.ranked.empty() &&
                        !(p.asked && !p.asked->problem.empty());
  if (simulate) rerank_simulated(priced, network, point, step, options.simulated, options.evaluator);
  p.plan = std::move(priced.plan);
  if (simulate) p.ranked_by = options.evaluator;
  if (simulate && p.asked) {
    // Taken from the re-ranked when it is there, else simulated now.
    p.asked->simulated_rank = rank_in(p.plan.ranked, p.asked->estimate.layout);
    p.asked->estimate = p.asked->simulated_rank ? p.plan.ranked[*p.asked->simulated_rank]
                                                : simulate_candidate(network, point, step, p.asked->estimate,
                                                                     options.evaluator);
  }
  return p;
}

}  // namespace ws
