#include "sim/study/study_summary.hpp"

#include <fmt/format.h>

#include "sim/study/plan_table.hpp"

namespace ws {

std::string format_study_summary(const StudyResult& result) {
  std::string out = fmt::format("study {} on {} ({})\n", result.spec.name, result.machine.name,
                                describe_step_options(result.spec.options));
  out += fmt::format("{:>7} {:>7} {:>9} {:>16} {:>9} {:>8} {:>9} {:>6} {:>6} {:>7} {:>8}\n", "devices",
                     "model", "batch tok", "layout", "step s", "PFLOP/s", "TFLOP/s/d", "%pk hw", "%MFU",
                     "eff %", "mem GiB");
  for (const auto& row : result.rows) {
    const std::string head = fmt::format("{:>7} {:>7} {:>9}", row.point.devices, row.point.model.name,
                                         batch_tokens(row.point.model, row.point.batch));
    if (!row.feasible) {
      out += fmt::format("{} infeasible: {}\n", head, row.reason);
      continue;
    }
    out += fmt::format("{} {:>16} {:>9.4f} {:>8.2f} {:>9.1f} {:>6.1f} {:>6.1f} {:>7.1f} {:>8.1f}\n", head,
                       to_string(row.best.layout), row.best.step.total().seconds(),
                       row.best.sustained_flops_per_s * 1e-15, flops_per_device(row) * 1e-12,
                       100.0 * row.best.hardware_peak_fraction, 100.0 * row.best.model_peak_fraction,
                       100.0 * row.efficiency, row.best.memory.total_bytes() / (1024.0 * 1024.0 * 1024.0));
  }
  return out;
}

}  // namespace ws
