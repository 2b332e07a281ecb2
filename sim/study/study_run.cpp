#include "sim/study/study_run.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/analytic/plan.hpp"
#include "sim/core/input_error.hpp"
#include "sim/machine/machine_loader.hpp"

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

std::string progress_line(std::size_t index, std::size_t count, const Machine& machine, const StudyRow& row) {
  const std::string head = fmt::format("[{}/{}] {} {} devices {}", index + 1, count, machine.name,
                                       row.point.devices, row.point.model.name);
  if (!row.feasible) return fmt::format("{}: infeasible: {}", head, row.reason);
  return fmt::format("{}: best {}, {:.3f} s", head, to_string(row.best.layout),
                     row.best.step.total().seconds());
}

}  // namespace

double flops_per_device(const StudyRow& row) {
  return row.best.sustained_flops_per_s / static_cast<double>(row.point.devices);
}

StudyResult run_study(const StudySpec& spec, const Machine& machine, const StudyProgress& progress) {
  StudyResult result{spec, machine, {}};
  double reference_flops_per_device = 0;
  for (std::size_t i = 0; i < spec.points.size(); ++i) {
    const StudyPoint& point = spec.points[i];
    if (point.devices > machine.total_devices()) {
      throw InputError(InputLocation{spec.file, point.line, fmt::format("points[{}].devices", i)},
                       std::to_string(point.devices),
                       fmt::format("at most the {} devices of {}", machine.total_devices(), machine.name));
    }
    const Plan plan = plan_layouts(machine, point.model, point.batch, point.devices, spec.options);
    StudyRow row;
    row.point = point;
    row.layouts_fitting = static_cast<int>(plan.ranked.size());
    row.layouts_valid = static_cast<int>(plan.ranked.size() + plan.over_memory.size());
    row.feasible = !plan.ranked.empty();
    if (row.feasible) {
      row.best = plan.ranked.front();
      if (reference_flops_per_device <= 0) reference_flops_per_device = flops_per_device(row);
      row.efficiency =
          reference_flops_per_device > 0 ? flops_per_device(row) / reference_flops_per_device : 0;
    } else {
      row.reason = infeasible_reason(plan);
    }
    if (progress) progress(progress_line(i, spec.points.size(), machine, row));
    result.rows.push_back(std::move(row));
  }
  return result;
}

StudyResult run_study(const StudySpec& spec, const std::string& machines_dir, const StudyProgress& progress) {
  return run_study(spec, load_machine_by_name(spec.machine, machines_dir), progress);
}

}  // namespace ws
