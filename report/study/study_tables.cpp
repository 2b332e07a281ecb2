#include "report/study/study_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "report/csv.hpp"
#include "report/study/study_writers.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws {
namespace {

// Fixed decimals and no locale: the same bytes on every machine.
std::string num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string join(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  return out + "\n";
}

std::vector<std::string> step_cells(const LayoutEstimate& e) {
  const auto& b = e.step;
  return {num(b.compute.seconds(), 6),   num(b.exposed_x.seconds(), 6),    num(b.exposed_y.seconds(), 6),
          num(b.exposed_z.seconds(), 6), num(b.exposed_data.seconds(), 6), num(e.hardware_peak_fraction, 6),
          num(e.model_peak_fraction, 6)};
}

const std::vector<std::string> kStepColumns{"compute_s",      "exposed_x_s",      "exposed_y_s",
                                            "exposed_z_s",    "exposed_data_s",   "peak_fraction_hw",
                                            "model_peak_fraction"};

std::vector<std::string> with_step_columns(std::vector<std::string> head) {
  head.insert(head.end(), kStepColumns.begin(), kStepColumns.end());
  return head;
}

}  // namespace

std::string format_candidates_csv(const StudyResult& result) {
  auto head = with_step_columns({"machine", "devices", "model", "batch_tokens", "rank", "layout", "step_s",
                                 "vs_best"});
  head.insert(head.end(), {"analytic_step_s", "memory_gib", "memory_capacity_gib"});
  std::string out = join(head);
  const double capacity = to_gib(result.machine.device.memory_capacity_bytes);
  for (const auto& row : result.rows) {
    const double best = row.feasible ? row.best.step.total().seconds() : 0;
    for (std::size_t i = 0; i < row.candidates.size(); ++i) {
      const auto& c = row.candidates[i];
      std::vector<std::string> cells{csv_field(result.machine.name),
                                     fmt::format("{}", row.point.devices),
                                     csv_field(row.point.model.name),
                                     fmt::format("{}", batch_tokens(row.point.model, row.point.batch)),
                                     fmt::format("{}", i + 1),
                                     csv_field(to_string(c.layout)),  // framework spellings hold commas
                                     num(c.step.total().seconds(), 6),
                                     num(c.step.total().seconds() / best, 6)};
      const auto step = step_cells(c);
      cells.insert(cells.end(), step.begin(), step.end());
      // Empty when the closed form ranked the layouts itself.
      cells.push_back(c.analytic_step == Time::zero() ? "" : num(c.analytic_step.seconds(), 6));
      cells.push_back(num(to_gib(c.memory.total_bytes()), 3));
      cells.push_back(num(capacity, 3));
      out += join(cells);
    }
  }
  return out;
}

std::string format_placement_routing_csv(const StudyResult& result) {
  auto head = with_step_columns({"machine", "devices", "model", "allocation", "routing", "layout", "step_s",
                                 "vs_fastest", "point_spread"});
  std::string out = join(head);
  for (const auto& row : result.placement_routing) {
    // Spread over the variants of this point: (slowest - fastest) / fastest step.
    double fastest = std::numeric_limits<double>::infinity(), slowest = 0;
    for (const auto& other : result.placement_routing) {
      if (other.point != row.point || !other.feasible) continue;
      fastest = std::min(fastest, other.best.step.total().seconds());
      slowest = std::max(slowest, other.best.step.total().seconds());
    }
    const auto& point = result.spec.points[static_cast<std::size_t>(row.point)];
    std::vector<std::string> cells{csv_field(result.machine.name), fmt::format("{}", point.devices),
                                   csv_field(point.model.name),    to_string(row.allocation),
                                   to_string(row.routing)};
    if (!row.feasible) {
      cells.resize(head.size());
      out += join(cells);
      continue;
    }
    const double step = row.best.step.total().seconds();
    cells.insert(cells.end(), {csv_field(to_string(row.best.layout)), num(step, 6), num(step / fastest, 6),
                               num(slowest / fastest - 1.0, 6)});
    const auto parts = step_cells(row.best);
    cells.insert(cells.end(), parts.begin(), parts.end());
    out += join(cells);
  }
  return out;
}

std::string format_sensitivity_csv(const StudyResult& result) {
  std::string out = join({"parameter", "nominal", "low", "high", "devices", "efficiency_nominal",
                          "efficiency_at_low", "efficiency_at_high", "peak_fraction_hw_nominal",
                          "peak_fraction_hw_at_low", "peak_fraction_hw_at_high", "effect", "source"});
  const StudyRow& last = result.rows.back();
  const double eff = last.efficiency;
  const double peak = last.feasible ? last.best.hardware_peak_fraction : 0;
  for (const auto& row : result.sensitivity) {
    const auto p = row.range.parameter;
    out += join({csv_field(range_label(row.range)), csv_field(row.nominal), csv_field(format_value(p, low_value(row.range))),
                 csv_field(format_value(p, high_value(row.range))), fmt::format("{}", last.point.devices), num(eff, 6),
                 num(eff + row.efficiency_low, 6), num(eff + row.efficiency_high, 6), num(peak, 6),
                 num(peak + row.peak_fraction_low, 6), num(peak + row.peak_fraction_high, 6),
                 num(row.effect(), 6), csv_field(row.range.source)});
  }
  return out;
}

std::vector<std::filesystem::path> write_study_tables(const StudyResult& result,
                                                      const std::filesystem::path& out_dir) {
  std::vector<std::filesystem::path> files{
      write_text_file(out_dir, result.spec.name + "-candidates.csv", format_candidates_csv(result))};
  if (!result.placement_routing.empty()) {
    files.push_back(write_text_file(out_dir, result.spec.name + "-placement-routing.csv",
                                    format_placement_routing_csv(result)));
  }
  if (!result.sensitivity.empty()) {
    files.push_back(
        write_text_file(out_dir, result.spec.name + "-sensitivity.csv", format_sensitivity_csv(result)));
  }
  return files;
}

}  // namespace ws
