#include "harness/validate/validation_record.hpp"

#include "base/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace ws {
double relative_error(double measured_s, double simulated_s) { return (simulated_s - measured_s) / measured_s; }

PhaseDifference phase_off_most(const PhaseTimes& measured, const PhaseTimes& simulated) {
  PhaseDifference most{"compute", measured.compute_s, simulated.compute_s};
  for (const CommGroup g : kAllCommGroups) {
    const char* group = to_string(g);
    const PhaseDifference d{group, measured.exposed(group), simulated.exposed(group)};
    if (std::abs(d.simulated_s - d.measured_s) > std::abs(most.simulated_s - most.measured_s)) most = d;
  }
  return most;
}

PhaseDifference compute_kind_off_most(const PhaseTimes& measured, const PhaseTimes& simulated) {
  PhaseDifference most{"", 0, 0};
  for (const auto& kind : compute_kind_names()) {
    const PhaseDifference d{kind, measured.compute(kind), simulated.compute(kind)};
    if (most.phase.empty() || std::abs(d.simulated_s - d.measured_s) > std::abs(most.simulated_s - most.measured_s)) {
      most = d;
    }
  }
  return most;
}

std::vector<PhaseDifference> compute_totals_by_kind(const std::vector<ValidationRecord>& records) {
  std::vector<PhaseDifference> totals;
  for (const auto& kind : compute_kind_names()) {
    PhaseDifference t{kind, 0, 0};
    for (const auto& r : records) {
      if (!r.simulated) continue;
      t.measured_s += r.measured.compute(kind);
      t.simulated_s += r.simulated->compute(kind);
    }
    if (t.measured_s > 0 || t.simulated_s > 0) totals.push_back(t);
  }
  return totals;
}

std::optional<ErrorSummary> summarize_errors(const std::vector<ValidationRecord>& records) {
  std::vector<double> errors;
  ErrorSummary s;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!r.simulated) continue;
    const double e = std::abs(relative_error(r.measured.step_s, r.simulated->step_s));
    if (errors.empty() || e > s.worst_abs_error) {
      s.worst_abs_error = e;
      s.worst_record = i;
    }
    errors.push_back(e);
  }
  if (errors.empty()) return std::nullopt;
  s.runs = errors.size();
  s.median_abs_error = median(std::move(errors));
  const auto& worst = records[s.worst_record];
  s.worst_phase = phase_off_most(worst.measured, *worst.simulated);
  s.worst_kind = compute_kind_off_most(worst.measured, *worst.simulated);
  return s;
}

std::optional<ErrorSummary> summarize_errors_on_file(const std::vector<ValidationRecord>& records) {
  std::vector<ValidationRecord> on_file = records;
  for (auto& r : on_file) r.simulated = r.simulated_on_file;
  return summarize_errors(on_file);
}

double median_core_share(const std::vector<ValidationRecord>& records) {
  std::vector<double> shares;
  for (const auto& r : records) {
    if (r.measured.cpu_s > 0 && r.measured.step_s > 0) shares.push_back(r.measured.cpu_s / r.measured.step_s);
  }
  return shares.empty() ? 0.0 : median(std::move(shares));
}

double median_host_speed(const std::vector<ValidationRecord>& records) {
  std::vector<double> speeds;
  for (const auto& r : records)
    if (r.measured.host_speed > 0) speeds.push_back(r.measured.host_speed);
  return speeds.empty() ? 0.0 : median(std::move(speeds));
}

}  // namespace ws
