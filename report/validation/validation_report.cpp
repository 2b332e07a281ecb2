#include "report/validation/validation_report.hpp"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "report/text_file.hpp"
#include "report/validation/validation_plots.hpp"
#include "report/validation/validation_writers.hpp"

namespace ws {
namespace {

// Below this median share of a core per rank the host was busy with other work.
constexpr double kBusyHostCoreShare = 0.9;

}  // namespace

void print_error_summary(const std::vector<ValidationRecord>& records, const std::optional<ErrorSummary>& errors,
                         std::ostream& out) {
  if (!errors) {
    out << "validate: no run was simulated: measured times only, no error figures" << std::endl;
    return;
  }
  const auto& worst = records.at(errors->worst_record);
  const auto& phase = errors->worst_phase;
  const double share = median_core_share(records);
  // The machine file describes a whole core per rank; a rank that got less ran slower than that.
  if (share > 0 && share < kBusyHostCoreShare) {
    out << fmt::format("validate: warning: the ranks got a median {:.2f} of a core (cpu_s / step_s): the host was "
                       "busy, so measured wall times include waiting for a core",
                       share)
        << std::endl;
  }
  const double speed = median_host_speed(records);
  if (speed > 0) {
    out << fmt::format("validate: host speed during the runs (sgemm 512^3 before each run / the machine file's rate): "
                       "median {:.2f}{}",
                       speed,
                       std::abs(speed - 1.0) > 0.05 ? ": the host ran at another speed than when calibrated, and the "
                                                      "errors measure that drift as well as the model"
                                                    : "")
        << std::endl;
  }
  out << fmt::format("validate: {} runs: median |error| {:.1f} %, worst {:.1f} % (target: median <= 5 %, worst <= 15 %)",
                     errors->runs, 100.0 * errors->median_abs_error, 100.0 * errors->worst_abs_error)
      << std::endl;
  out << fmt::format("validate: worst run {} ({}): measured {:.4f} s, simulated {:.4f} s; phase off most: {} "
                     "(measured {:.4f} s, simulated {:.4f} s)",
                     worst.run.id, describe(worst.run), worst.measured.step_s, worst.simulated->step_s, phase.phase,
                     phase.measured_s, phase.simulated_s)
      << std::endl;
  // Compute per kind comes from the engine's trace; runs read from a CSV (--measured) have none.
  const bool kinds_measured = std::any_of(records.begin(), records.end(), [](const ValidationRecord& r) {
    return !r.measured.compute_by_kind_s.empty();
  });
  if (!kinds_measured) return;
  out << fmt::format("validate: in its compute, the kind off most: {} (measured {:.4f} s, simulated {:.4f} s)",
                     errors->worst_kind.phase, errors->worst_kind.measured_s, errors->worst_kind.simulated_s)
      << std::endl;
  out << "validate: compute per kind of op, summed over the simulated runs (rank 0, per step):" << std::endl;
  for (const auto& t : compute_totals_by_kind(records)) {
    out << fmt::format("validate:   {:<14} measured {:8.4f} s  simulated {:8.4f} s  simulated / measured {:.2f}",
                       t.phase, t.measured_s, t.simulated_s, t.measured_s > 0 ? t.simulated_s / t.measured_s : 0.0)
        << std::endl;
  }
  double measured_progress = 0, simulated_progress = 0;
  for (const auto& r : records) {
    if (!r.simulated) continue;
    measured_progress += r.measured.progress_s;
    simulated_progress += r.simulated->progress_s;
  }
  if (measured_progress > 0 || simulated_progress > 0) {
    out << fmt::format("validate:   {:<14} measured {:8.4f} s  simulated {:8.4f} s  (inside MPI moving non-blocking "
                       "collectives' data; part of compute, outside the kinds)",
                       "progress", measured_progress, simulated_progress)
        << std::endl;
  }
}

void write_validation_report(ValidationReport& report, const ValidateOptions& o, std::ostream& log) {
  report.files.push_back(write_text_file(o.out_dir, "validation.csv", format_validation_csv(report.records)));
  report.files.push_back(write_text_file(o.out_dir, "validation.json",
                                         format_validation_json(report.records, report.errors, report.provenance)));
  print_error_summary(report.records, report.errors, log);
  if (report.errors_on_file) {
    log << fmt::format("validate: on the machine file as written (no host tracking): median |error| {:.1f} %, worst "
                       "{:.1f} % ({})",
                       100.0 * report.errors_on_file->median_abs_error, 100.0 * report.errors_on_file->worst_abs_error,
                       report.records.at(report.errors_on_file->worst_record).run.id)
        << std::endl;
  }
  if (o.plot && report.errors) {
    for (auto& file : plot_validation(report.records, report.provenance.machine_name, o.out_dir)) report.files.push_back(file);
  }
  for (const auto& file : report.files) log << "validate: wrote " << file.string() << std::endl;
}

}  // namespace ws
