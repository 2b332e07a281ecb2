// One point priced for `weakscale plan`: every layout ranked (price_point, as the study prices its
// points), and a layout asked for by name priced beside them, with where it stands.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "sim/layout_search/plan.hpp"
#include "sim/machine/machine.hpp"
#include "sim/pricing/collective_pricing.hpp"
#include "sim/step/step_options.hpp"
#include "sim/study/study_spec.hpp"

namespace ws {

struct PointPlanOptions {
  // closed_form: every layout priced alone by the closed form; flow or every_step: the first
  // `simulated` of those that fit re-ranked by their simulated step (collectives priced so).
  CollectiveModel evaluator = CollectiveModel::closed_form;
  int simulated = 0;
  std::optional<Layout> asked;  // a layout of the point's devices to price beside the ranked ones
  std::vector<Strategy> strategies{Strategy::four_d};  // whose layouts are ranked together (the point's are not read)
  int jobs = 1;  // threads pricing the layouts (plan_layouts)
};

// The asked layout: its estimate (its step simulated where the evaluator simulates) and ranks.
struct AskedLayout {
  LayoutEstimate estimate;
  std::optional<std::size_t> closed_form_rank;  // 0-based among the fitting layouts; none: over memory
  std::optional<std::size_t> simulated_rank;    // 0-based among the re-ranked; none: outside them, or not simulated
  // Why the layout cannot run the point's model and batch; when set, nothing else is (and nothing
  // was simulated).
  std::string problem;
};

struct PointPlan {
  Plan plan;                // ranked: by the closed form, or the re-ranked first `simulated` alone
  std::size_t fitting = 0;  // layouts that fit in memory
  // What ranked plan.ranked: the closed form, or the simulating evaluator that re-ranked its first
  // (none re-ranks a point where no layout fits, or whose asked layout cannot run).
  CollectiveModel ranked_by = CollectiveModel::closed_form;
  std::optional<AskedLayout> asked;
  bool strategies = false;  // ranked more than the 4D layouts (PointPlanOptions::strategies)
};

// InputError (as plan_layouts) for a device count out of range.
PointPlan plan_point(const Machine& machine, const StudyPoint& point, const StepOptions& step,
                     const PointPlanOptions& options);

}  // namespace ws
