#include "report/study/study_summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/study/plan_table.hpp"

namespace ws {

Headline study_headline(const StudyResult& result) {
  Headline h;
  for (const UncertaintyRange& r : result.machine.uncertainty)
    (r.spans == RangeSpan::best_to_typical ? h.best_case_ranges : h.error_ranges).emplace_back(range_label(r));
  h.statement = "headline: the prediction from the machine file as written (each value with its public source)";
  if (result.samples == 0) {
    h.statement += "; no uncertainty samples were drawn";
    return h;
  }
  h.statement += fmt::format("; band: the 10th-90th percentile of {} draws across the file's ranges", result.samples);
  if (!h.best_case_ranges.empty())
    h.statement += fmt::format(
        ". The written {} of {} {} the best case a run sees (spans: best_to_typical), so the band reaches "
        "below the headline and its median is the typical figure",
        h.best_case_ranges.size() == 1 ? "value" : "values", fmt::join(h.best_case_ranges, ", "),
        h.best_case_ranges.size() == 1 ? "is" : "are");
  if (!h.error_ranges.empty())
    h.statement += fmt::format("; {} {} central estimates with errors either way", fmt::join(h.error_ranges, ", "),
                               h.error_ranges.size() == 1 ? "is a" : "are");
  return h;
}

std::string format_study_summary(const StudyResult& result) {
  std::string out = fmt::format("study {} on {} ({})\n", result.spec.name, result.machine.name,
                                describe_step_options(result.spec.options));
  if (!result.machine.overrides.empty()) {
    out += fmt::format("set for this run: {}\n", fmt::join(result.machine.overrides, ", "));
  }
  out += fmt::format("{:>7} {:>7} {:>9} {:>16} {:>9} {:>8} {:>9} {:>6} {:>6} {:>7} {:>8} {:>10}\n", "devices",
                     "model", "batch tok", "layout", "step s", "PFLOP/s", "TFLOP/s/d", "%pk hw", "%MFU",
                     "eff %", "mem GiB", "k-th vs 1st");
  for (const auto& row : result.rows) {
    const std::string head = fmt::format("{:>7} {:>7} {:>9}", row.point.devices, row.point.model.name,
                                         batch_tokens(row.point.model, row.point.batch));
    if (!row.feasible) {
      out += fmt::format("{} infeasible: {}\n", head, row.reason);
      continue;
    }
    // How much the layout choice matters: the k-th fastest layout's step against the best one's.
    const double kth = row.candidates.empty() ? 1.0
                                              : row.candidates.back().step.total() / row.best.step.total();
    out += fmt::format("{} {:>16} {:>9.4f} {:>8.2f} {:>9.1f} {:>6.1f} {:>6.1f} {:>7.1f} {:>8.1f} {:>+9.1f}%\n", head,
                       to_string(row.best.layout), row.best.step.total().seconds(),
                       row.best.sustained_flops_per_s * 1e-15, flops_per_device(row) * 1e-12,
                       100.0 * row.best.hardware_peak_fraction, 100.0 * row.best.model_peak_fraction,
                       100.0 * row.efficiency, to_gib(row.best.memory.total_bytes()),
                       100.0 * (kth - 1.0));
  }
  if (result.samples > 0) {
    out += fmt::format("\nuncertainty: {} samples (seed {}); efficiency %, percent of peak (hw) %: median "
                       "[10th, 90th percentile]\n{}\n",
                       result.samples, result.seed, study_headline(result).statement);
    for (const auto& row : result.rows) {
      if (!row.efficiency_band) continue;
      const Band& e = *row.efficiency_band;
      const Band& p = *row.peak_fraction_band;
      out += fmt::format("{:>7} {:>7}  eff {:6.1f} [{:6.1f}, {:6.1f}]  peak {:5.1f} [{:5.1f}, {:5.1f}]\n",
                         row.point.devices, row.point.model.name, 100 * e.p50, 100 * e.p10, 100 * e.p90,
                         100 * p.p50, 100 * p.p10, 100 * p.p90);
    }
  }
  if (!result.placement_routing.empty()) {
    out += "\nallocation x routing (best layout of each), step s:\n";
    for (const auto& v : result.placement_routing) {
      const auto& point = result.spec.points[static_cast<std::size_t>(v.point)];
      out += fmt::format("{:>7} {:>7} {:>10} {:>11} {:>16} {:>9}\n", point.devices, point.model.name,
                         to_string(v.allocation), to_string(v.routing),
                         v.feasible ? to_string(v.best.layout) : "infeasible",
                         v.feasible ? fmt::format("{:.4f}", v.best.step.total().seconds()) : "");
    }
  }
  if (!result.sensitivity.empty()) {
    out += fmt::format("\nsensitivity at {} devices (one at a time, low / high end; percentage points):\n",
                       result.rows.back().point.devices);
    for (const auto& s : result.sensitivity) {
      out += fmt::format("  {:<32} eff {:+6.1f} / {:+6.1f}   peak {:+5.1f} / {:+5.1f}\n", range_label(s.range),
                         100 * s.efficiency_low, 100 * s.efficiency_high, 100 * s.peak_fraction_low,
                         100 * s.peak_fraction_high);
    }
  }
  return out;
}

}  // namespace ws
