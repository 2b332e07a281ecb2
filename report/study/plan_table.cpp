#include "report/study/plan_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "report/csv.hpp"
#include "workload/flops.hpp"

namespace ws {
namespace {

// Where the table has a strategy column: the layout column's width and the strategy's cell.
struct Columns {
  bool strategies = false;
  std::size_t layout_width = 16;
};

std::string table_row(std::string_view rank, const LayoutEstimate& e, int devices, Bytes capacity_bytes,
                      const Columns& c = {}) {
  const auto& b = e.step;
  const std::string strategy = c.strategies ? fmt::format(" {:>8}", to_string(e.layout.strategy)) : "";
  const std::string pipeline = c.strategies ? fmt::format(" {:>8.4f}", b.pipeline.seconds()) : "";
  return fmt::format(
      "{:>5}{} {:>{}} {:>9.4f} {:>9.4f} {:>8.4f} {:>8.4f} {:>8.4f} {:>8.4f}{} {:>8.4f} {:>8.1f} {:>6.1f} "
      "{:>6.1f} {:>7.1f} / {:.0f}\n",
      rank, strategy, to_string(e.layout), c.layout_width, b.total().seconds(), b.compute.seconds(),
      b.exposed_x.seconds(), b.exposed_y.seconds(), b.exposed_z.seconds(), b.exposed_data.seconds(), pipeline,
      b.skew.seconds(), e.sustained_flops_per_s / devices * 1e-12, 100.0 * e.hardware_peak_fraction,
      100.0 * e.model_peak_fraction, to_gib(e.memory.total_bytes()), to_gib(capacity_bytes));
}

std::string table_header(const Columns& c = {}) {
  const std::string strategy = c.strategies ? fmt::format(" {:>8}", "strategy") : "";
  const std::string pipeline = c.strategies ? fmt::format(" {:>8}", "pipeline") : "";
  const std::string blank8 = c.strategies ? fmt::format(" {:>8}", "") : "";
  const std::string pipeline_unit = c.strategies ? fmt::format(" {:>8}", "s") : "";
  return fmt::format("{:>5}{} {:>{}} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}{} {:>8} {:>8} {:>6} {:>6} {:>7}\n", "rank",
                     strategy, "layout", c.layout_width, "step s", "compute", "exp X", "exp Y", "exp Z", "exp data",
                     pipeline, "skew", "TFLOP/s", "%pk hw", "%MFU", "mem GiB") +
         fmt::format("{:>5}{} {:>{}} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}{} {:>8} {:>8} {:>6} {:>6} {:>7}\n", "",
                     blank8, c.strategies ? "" : "Gd x Gx x Gy x Gz", c.layout_width, "", "s", "s", "s", "s", "s",
                     pipeline_unit, "s", "/device", "", "", "/ capacity");
}

std::string csv_row(const std::string& rank, const LayoutEstimate& e, int devices, double fastest_s, Bytes capacity) {
  const auto& b = e.step;
  const auto f = [](double v) { return fmt::format("{:.6f}", v); };
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{},{},{:.3f},{:.3f},{}\n", rank,
                     csv_field(to_string(e.layout)), f(b.total().seconds()), f(b.total().seconds() / fastest_s),
                     f(b.compute.seconds()), f(b.exposed_x.seconds()), f(b.exposed_y.seconds()),
                     f(b.exposed_z.seconds()), f(b.exposed_data.seconds()), f(b.pipeline.seconds()),
                     f(b.pipeline_transfer.seconds()), f(b.skew.seconds()),
                     // Empty where the closed form ranked the layouts itself.
                     e.analytic_step == Time::zero() ? "" : f(e.analytic_step.seconds()),
                     e.sustained_flops_per_s / devices * 1e-12, f(e.hardware_peak_fraction), f(e.model_peak_fraction),
                     to_gib(e.memory.total_bytes()), to_gib(capacity), e.fits_memory ? 1 : 0);
}

// "+4.3 % on the fastest, 32x1x1x256 (12.5258 s)", or "the fastest" when it is.
std::string against_fastest(const LayoutEstimate& asked, const LayoutEstimate& fastest) {
  if (asked.layout == fastest.layout) return "the fastest";
  return fmt::format("{:+.1f} % on the fastest, {} ({:.4f} s)",
                     100.0 * (asked.step.total().seconds() / fastest.step.total().seconds() - 1.0),
                     to_string(fastest.layout), fastest.step.total().seconds());
}

// The asked layout's label in the table: its rank in plan.ranked, or "-" where it has none there.
std::string asked_rank(const PointPlan& priced) {
  const AskedLayout& asked = priced.asked.value();
  const std::optional<std::size_t> rank =
      priced.ranked_by == CollectiveModel::closed_form ? asked.closed_form_rank : asked.simulated_rank;
  return rank ? fmt::format("{}", *rank + 1) : "-";
}

// Where the asked layout stands, for its closing line.
std::string asked_note(const PointPlan& priced) {
  const AskedLayout& asked = priced.asked.value();
  if (priced.ranked_by == CollectiveModel::closed_form) {
    if (!asked.closed_form_rank) return "";
    return fmt::format("rank {} of {} fitting layouts by the closed form", *asked.closed_form_rank + 1,
                       priced.fitting);
  }
  const char* where =
      priced.ranked_by == CollectiveModel::every_step ? "with every send its own flow" : "on the flow network";
  const std::size_t simulated = priced.plan.ranked.size();
  if (asked.simulated_rank) {
    return fmt::format("rank {} of the {} simulated {} (rank {} of {} by the closed form)", *asked.simulated_rank + 1,
                       simulated, where, asked.closed_form_rank.value() + 1, priced.fitting);
  }
  return asked.closed_form_rank ? fmt::format("simulated {} too; rank {} of {} by the closed form, outside the {} "
                                              "the {} evaluator re-ranks",
                                              where, *asked.closed_form_rank + 1, priced.fitting, simulated,
                                              to_string(priced.ranked_by))
                                : fmt::format("simulated {} too", where);
}

// The closing line: the asked layout's step and percent of peak, where it stands, and its
// distance to the fastest (or why it cannot run).
std::string asked_line(const PointPlan& priced, const Machine& machine) {
  const AskedLayout& asked = priced.asked.value();
  const LayoutEstimate& e = asked.estimate;
  const std::string note = asked_note(priced);
  if (!asked.closed_form_rank) {
    return fmt::format("\nlayout {}: does not fit in device memory: needs {:.1f} GiB of {:.0f} GiB{}\n",
                       to_string(e.layout), to_gib(e.memory.total_bytes()), to_gib(machine.device.memory_capacity_bytes),
                       note.empty() ? "" : " (" + note + ")");
  }
  // The table's columns are the 4D parts; a pipelined layout's bubble and transfers are not among them.
  const std::string pipeline =
      e.step.pipeline > Time::zero()
          ? fmt::format(" ({:.4f} s of it the last stage idle for its peers or waiting for transfers between stages)",
                        e.step.pipeline.seconds())
          : "";
  return fmt::format("\nlayout {}: {:.4f} s per step{}, {:.1f} % of peak (hardware flops); {}; {}\n",
                     to_string(e.layout), e.step.total().seconds(), pipeline, 100.0 * e.hardware_peak_fraction, note,
                     against_fastest(e, priced.plan.ranked.front()));
}

PlanTableOptions point_plan_table(const PointPlan& priced, int top, bool show_invalid) {
  PlanTableOptions table;
  table.strategies = priced.strategies;
  table.top = top;
  table.show_invalid = show_invalid;
  table.fitting = priced.fitting;
  if (priced.asked) {
    table.asked = priced.asked->estimate;
    table.asked_rank = asked_rank(priced);
  }
  return table;
}

}  // namespace

std::string format_point_plan(const Machine& machine, const StudyPoint& point, const StepOptions& step,
                              const PointPlan& priced, int top, bool show_invalid) {
  std::string out;
  if (priced.ranked_by != CollectiveModel::closed_form) {
    out += fmt::format("{} evaluator: the closed form's fastest {} of {} fitting layouts simulated, re-ranked\n",
                       to_string(priced.ranked_by), priced.plan.ranked.size(), priced.fitting);
  }
  out += format_plan_table(machine, point.model, point.batch, point.devices, step, priced.plan,
                           point_plan_table(priced, top, show_invalid));
  if (priced.asked) out += asked_line(priced, machine);
  return out;
}

std::string format_point_plan_csv(const Machine& machine, int devices, const PointPlan& priced) {
  return format_plan_csv(machine, devices, priced.plan, point_plan_table(priced, 0, false));
}

std::string format_plan_csv(const Machine& machine, int devices, const Plan& plan, const PlanTableOptions& options) {
  std::string out =
      "rank,layout,step_s,vs_fastest,compute_s,exposed_x_s,exposed_y_s,exposed_z_s,exposed_data_s,pipeline_s,"
      "pipeline_transfer_s,skew_s,"
      "closed_form_step_s,tflops_per_device,peak_fraction_hw,model_peak_fraction,memory_gib,memory_capacity_gib,"
      "fits_memory\n";
  const Bytes capacity = machine.device.memory_capacity_bytes;
  const double fastest_s = !plan.ranked.empty() ? plan.ranked.front().step.total().seconds()
                           : options.asked      ? options.asked->step.total().seconds()
                                                : 1.0;
  bool asked_listed = false;
  for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
    out += csv_row(fmt::format("{}", i + 1), plan.ranked[i], devices, fastest_s, capacity);
    asked_listed = asked_listed || (options.asked && plan.ranked[i].layout == options.asked->layout);
  }
  if (options.asked && !asked_listed) out += csv_row("-", *options.asked, devices, fastest_s, capacity);
  return out;
}

std::string describe_step_options(const StepOptions& o) {
  std::string overlaps;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    overlaps += overlaps.empty() ? "" : "+";
    overlaps += name;
  };
  add(o.overlap_all_reduce, "OAR");
  add(o.overlap_reduce_scatter, "ORS");
  add(o.overlap_all_gather, "OAG");
  add(o.overlap_data_parallel, "data overlap");
  return fmt::format("{}, {}, overlap {}", to_string(o.precision), o.recompute ? "recompute" : "no recompute",
                     overlaps.empty() ? "none" : overlaps);
}

std::string job_shape_line(const Machine& machine, int devices, const StepOptions& step) {
  const int per_node = ranks_on_a_node(machine, devices, step.ranks_per_node);
  const int nodes = (devices + per_node - 1) / per_node;
  return fmt::format("job: {} node{} x {} rank{} per node (of {} devices each), {} allocation\n", nodes,
                     nodes == 1 ? "" : "s", per_node, per_node == 1 ? "" : "s", machine.node.devices,
                     to_string(step.allocation));
}

std::string format_plan_table(const Machine& machine, const ModelSpec& model, const Batch& batch, int devices,
                              const StepOptions& step, const Plan& plan, const PlanTableOptions& options) {
  std::string out = fmt::format(
      "{}: model {} ({} layers, hidden {}, {} heads, {}{:.2f} B parameters), {} devices, batch {} "
      "sequences ({} tokens), {}\n",
      machine.name, model.name, model.layers, model.hidden, model.heads,
      model.gpt_style() ? std::string() : architecture_summary(model) + ", ", parameter_count(model) * 1e-9,
      devices, batch.sequences, batch_tokens(model, batch), describe_step_options(step));
  out += fmt::format(
      "peak {:.1f} TFLOP/s per device; collectives priced as {}; %pk hw counts recomputation flops, %MFU does "
      "not\n",
      peak(machine.device, step.precision).tflops(), machine.collective_libraries.front().name);
  if (!machine.overrides.empty()) out += fmt::format("set for this run: {}\n", fmt::join(machine.overrides, ", "));
  out += job_shape_line(machine, devices, step) + "\n";
  const Bytes capacity = machine.device.memory_capacity_bytes;
  const std::size_t shown =
      std::min<std::size_t>(plan.ranked.size(), static_cast<std::size_t>(std::max(options.top, 0)));
  const bool asked_shown =
      options.asked && std::any_of(plan.ranked.begin(), plan.ranked.begin() + static_cast<std::ptrdiff_t>(shown),
                                   [&](const LayoutEstimate& e) { return e.layout == options.asked->layout; });
  Columns columns;
  columns.strategies = options.strategies;
  if (columns.strategies) {
    for (std::size_t i = 0; i < shown; ++i)
      columns.layout_width = std::max(columns.layout_width, to_string(plan.ranked[i].layout).size());
    if (options.asked) columns.layout_width = std::max(columns.layout_width, to_string(options.asked->layout).size());
  }
  if (plan.ranked.empty()) out += "no valid layout fits in device memory\n";
  if (!plan.ranked.empty() || options.asked) out += table_header(columns);
  for (std::size_t i = 0; i < shown; ++i) {
    out += table_row(fmt::format("{}", i + 1), plan.ranked[i], devices, capacity, columns);
  }
  if (shown < plan.ranked.size()) {
    out += fmt::format("  ... {} more fitting layouts (--top N shows more)\n", plan.ranked.size() - shown);
  }
  if (options.asked && !asked_shown) out += table_row(options.asked_rank, *options.asked, devices, capacity, columns);
  const std::size_t fitting = std::max(options.fitting, plan.ranked.size());
  out += fmt::format(
      "\n{} layouts fit in memory, {} valid but over memory, {} invalid for this model and batch{}\n",
      fitting, plan.over_memory.size(), plan.invalid.size(),
      options.show_invalid || (plan.over_memory.empty() && plan.invalid.empty())
          ? ""
          : " (--show-invalid lists them)");
  if (options.show_invalid) {
    for (const auto& e : plan.over_memory) {
      out += fmt::format("  over memory {:>16}: needs {:.1f} GiB of {:.0f} GiB\n", to_string(e.layout),
                         to_gib(e.memory.total_bytes()), to_gib(capacity));
    }
    for (const auto& c : plan.invalid) {
      out += fmt::format("  invalid     {:>16}: {}\n", to_string(c.layout), c.reason);
    }
  }
  return out;
}

}  // namespace ws
