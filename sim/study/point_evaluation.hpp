// One point of a study evaluated: its fastest layouts with their predicted steps. The evaluator is
// a plain function so that the analytic model and the step simulator (which re-ranks the analytic
// top k) plug into the same sweep.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/layout_search/plan.hpp"
#include "sim/step/step_estimate.hpp"
#include "sim/machine/machine.hpp"
#include "sim/pricing/collective_pricing.hpp"
#include "sim/pricing/job_network.hpp"
#include "sim/study/study_spec.hpp"

namespace ws {

struct PointEvaluation {
  bool feasible = false;                   // some valid layout fits in device memory
  std::string reason;                      // why not, when !feasible
  int layouts_valid = 0;                   // layouts that can run the model and batch (divisibility)
  int layouts_fitting = 0;                 // of those, the ones that fit in device memory
  std::vector<LayoutEstimate> candidates;  // the fastest top_k fitting layouts, fastest first
};

// Scores one point on one machine with the given step options and keeps the top_k layouts.
using PointEvaluator = std::function<PointEvaluation(const Machine& machine, const StudyPoint& point,
                                                     const StepOptions& options, int top_k)>;

// An evaluator and the name recorded with its results (a resumed study only reuses results of
// the same evaluator). Evaluators keep caches (the job networks of recent points), so a study
// makes one per thread: make_worker returns a new one with caches of its own.
struct StudyEvaluator {
  std::string name;
  std::function<PointEvaluator()> make_worker;
};

// The point's job on the machine, from `networks` when given (kept there), else in `own`; throws
// InputError (as plan_layouts) for a device count out of range.
JobNetwork& point_network(const Machine& machine, const StudyPoint& point, const StepOptions& options,
                          JobNetworks* networks, std::optional<JobNetwork>& own);

// One point priced, the way every study evaluator and `weakscale plan` price it: every valid layout
// of its devices ranked by the closed-form step model (sim/layout_search/plan.hpp), then, when
// `simulated` > 0, the first `simulated` that fit in memory re-ranked by their step simulated with
// `collectives` (simulate_candidate; ties keep the closed form's order).
struct PricedPoint {
  Plan plan;                // ranked: by the closed form, or the re-ranked first `simulated` alone
  std::size_t fitting = 0;  // layouts that fit in memory (plan.ranked may hold only the re-ranked)
};
// The point's strategies' layouts (StudyPoint::strategies) are ranked together.
PricedPoint price_point(JobNetwork& network, const StudyPoint& point, const StepOptions& options, int simulated = 0,
                        CollectiveModel collectives = CollectiveModel::flow, int jobs = 1);
// price_point's second half: the first `simulated` of the closed form's ranking (on the same
// network) re-ranked by their simulated step.
void rerank_simulated(PricedPoint& priced, JobNetwork& network, const StudyPoint& point, const StepOptions& options,
                      int simulated, CollectiveModel collectives);

// Every valid layout ranked by the closed-form step model (sim/layout_search/plan.hpp). `networks`, if
// given, keeps the point's job network for later points on the same network.
PointEvaluation evaluate_point_analytic(const Machine& machine, const StudyPoint& point,
                                        const StepOptions& options, int top_k, JobNetworks* networks = nullptr);
StudyEvaluator closed_form_evaluator();

// Every valid layout pre-ranked by the closed-form model, then the first max(top_k, simulated) that
// fit in memory run through the step simulator (sim/step: the engine's exact schedule on the
// machine model), re-ranked by their simulated step, and the top_k kept. Simulating more than are
// kept matters where only the best is wanted (placement, samples, sensitivity ask for one): the
// closed form's first is often not the simulator's. Each candidate keeps its closed-form step in
// analytic_step.
// `collectives`: the flow network's phases (the default), or the per-send reference (small jobs).
PointEvaluation evaluate_point_simulated(const Machine& machine, const StudyPoint& point,
                                         const StepOptions& options, int top_k, int simulated,
                                         JobNetworks* networks = nullptr,
                                         CollectiveModel collectives = CollectiveModel::flow);
inline constexpr int kDefaultSimulatedLayouts = 16;

// `candidate` (a closed-form estimate of the point) with its step simulated on the flow network by
// the step simulator; flops and memory stay, the rates follow the new step, and analytic_step keeps
// the closed form's.
LayoutEstimate simulate_candidate(JobNetwork& network, const StudyPoint& point, const StepOptions& options,
                                  const LayoutEstimate& candidate,
                                  CollectiveModel collectives = CollectiveModel::flow);
StudyEvaluator flow_evaluator(int simulated = kDefaultSimulatedLayouts);

}  // namespace ws
