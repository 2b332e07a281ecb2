// Text report of a layout plan for `weakscale plan`: a ranked table of the fastest layouts that
// fit, then how many were over memory or invalid (and why, on request); a layout asked for by name
// with where it stands.
#pragma once

#include <optional>
#include <string>

#include "sim/layout_search/plan.hpp"
#include "sim/study/point_plan.hpp"

namespace ws {

struct PlanTableOptions {
  int top = 10;               // rows of the ranked table
  bool show_invalid = false;  // list over-memory and invalid layouts with their reasons
  // Layouts that fit, where plan.ranked holds only some of them (the flow evaluator's re-ranked
  // top); 0: plan.ranked.size().
  std::size_t fitting = 0;
  // A layout asked about by name (plan --layout): its row follows the top rows unless they hold
  // it, under `asked_rank` (its rank in plan.ranked, or "-" where it has none there).
  std::optional<LayoutEstimate> asked;
  std::string asked_rank;
  // Layouts of several strategies (plan --strategy): a strategy column, a layout column as wide as
  // the widest spelling, and the pipeline's bubble and transfers as a part of their own.
  bool strategies = false;
};

// "job: 64 nodes x 4 ranks per node (of 4 devices each), contiguous allocation": how the job sits.
std::string job_shape_line(const Machine& machine, int devices, const StepOptions& step);
std::string format_plan_table(const Machine& machine, const ModelSpec& model, const Batch& batch, int devices,
                              const StepOptions& step, const Plan& plan, const PlanTableOptions& options);

// The ranked layouts as CSV (plan --csv): every row of plan.ranked in rank order, then the asked
// layout when plan.ranked does not hold it (rank "-"), with the table's columns in plain numbers
// (seconds, fractions, GiB) and the closed form's step where the flow evaluator re-ranked.
std::string format_plan_csv(const Machine& machine, int devices, const Plan& plan, const PlanTableOptions& options);

// A point priced by plan_point as `weakscale plan` prints it: the evaluator's line where it
// re-ranked, the table of the first `top` rows (and the asked layout's), and the asked layout's
// closing line: its step and percent of peak, where it stands, and its distance to the fastest.
std::string format_point_plan(const Machine& machine, const StudyPoint& point, const StepOptions& step,
                              const PointPlan& priced, int top, bool show_invalid);
// format_plan_csv of a point priced by plan_point.
std::string format_point_plan_csv(const Machine& machine, int devices, const PointPlan& priced);

// "bf16, recompute, OAR+ORS+OAG" : the step options in one short phrase.
std::string describe_step_options(const StepOptions& options);

}  // namespace ws
