// One row of the validation: a run, what the engine measured, what the simulator predicted, and
// the error statistics over all rows (median and worst absolute relative step-time error).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/validate/phase_times.hpp"
#include "harness/validate/validation_run.hpp"

namespace ws {

struct ValidationRecord {
  ValidationRun run;
  PhaseTimes measured;
  std::optional<PhaseTimes> simulated;  // none when the run was not simulated
  // With host tracking (validate.hpp), `simulated` ran on the machine re-measured around this
  // configuration's runs and this is the same run on the machine file as written; else none.
  std::optional<PhaseTimes> simulated_on_file;
};

// (simulated - measured) / measured: positive when the simulator is slow.
double relative_error(double measured_s, double simulated_s);

// The phase ("compute" or a group name) with the largest |simulated - measured| seconds.
struct PhaseDifference {
  std::string phase;
  double measured_s = 0;
  double simulated_s = 0;
};
PhaseDifference phase_off_most(const PhaseTimes& measured, const PhaseTimes& simulated);

// Within compute: the kind of op ("gemm", "gelu", ...) with the largest |simulated - measured|.
PhaseDifference compute_kind_off_most(const PhaseTimes& measured, const PhaseTimes& simulated);

// Compute time per kind summed over the records with a simulation, measured and simulated, in
// ComputeKind order (kinds that are 0 in both left out).
std::vector<PhaseDifference> compute_totals_by_kind(const std::vector<ValidationRecord>& records);

struct ErrorSummary {
  std::size_t runs = 0;            // records with a simulation
  double median_abs_error = 0;     // of |relative_error(step)|
  double worst_abs_error = 0;
  std::size_t worst_record = 0;    // index into the records
  PhaseDifference worst_phase;     // of the worst record
  PhaseDifference worst_kind;      // of the worst record, within compute
};

// Over the records that have a simulation; none when no record has one.
std::optional<ErrorSummary> summarize_errors(const std::vector<ValidationRecord>& records);

// The same over the records' simulated_on_file (none when no record has one).
std::optional<ErrorSummary> summarize_errors_on_file(const std::vector<ValidationRecord>& records);

// Median over the records of measured cpu_s / step_s: the share of a core a rank got (0 when
// no record has a CPU time).
double median_core_share(const std::vector<ValidationRecord>& records);

// Median over the records of measured host_speed (0 when none was measured).
double median_host_speed(const std::vector<ValidationRecord>& records);

}  // namespace ws
