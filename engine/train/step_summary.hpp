// The measurement of a run (../shared/docs/4d-algorithm.md, "Benchmark methodology"): per-step
// records reduced over the ranks, and the summary over the steps after the warm-up ones (default:
// 10 steps, the last 8 averaged) with the breakdown into computation and exposed communication
// per group, the overlap achieved, flop/s and percent of peak.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "workload/model.hpp"
#include "engine/train/trainer.hpp"

namespace ws {

// One step as the whole job saw it.
struct StepRecord {
  long long step = 0;
  double loss = 0;
  double seconds = 0;  // slowest rank (every rank waits for it at the next collective)
  double cpu_seconds = 0;  // mean over ranks of the process CPU time in the step
  // Mean over ranks of each group's totals (blocked, waited, in flight; bytes per rank).
  TimelineTotals communication{};
};

// Collective over `world`: every rank passes its own result and gets the job's record.
StepRecord reduce_step(const StepResult& local, const Communicator& world);

struct GroupSummary {
  double exposed_s = 0;    // mean per step blocked in MPI on this group (blocking + waits)
  double in_flight_s = 0;  // mean per step that non-blocking collectives were in flight
  double waited_s = 0;     // mean per step waited for them (their exposed part)
  double progress_s = 0;   // mean per step inside MPI starting and testing them (GroupTotals::progress)
  double bytes = 0;        // mean per step and rank
  double collectives = 0;  // mean per step
  // Share of the non-blocking collectives' in-flight time that computation hid:
  // 1 - waited / in flight (0 with none in flight).
  double hidden_fraction() const { return in_flight_s > 0 ? 1.0 - waited_s / in_flight_s : 0.0; }
};

struct RunSummary {
  int measured_steps = 0;
  long long first_step = 0;  // 1-based index of the first measured step
  double step_s = 0, step_min_s = 0, step_max_s = 0;
  double cpu_s = 0;  // mean per step and rank; cpu_s / step_s well below 1: a shared, loaded machine
  double exposed_s = 0;  // sum over groups
  double compute_s = 0;  // step_s - exposed_s
  std::array<GroupSummary, kCommGroups> groups{};
  double tokens_per_s = 0;
  double model_flops = 0, hardware_flops = 0;  // per step, whole job
  double model_flop_per_s = 0, hardware_flop_per_s = 0;
  std::optional<double> peak_flop_per_s_per_device;
  double percent_of_peak_model = 0, percent_of_peak_hardware = 0;  // 0 without --peak
};

// Summary over records[warmup..]; throws std::invalid_argument unless 0 <= warmup < size.
// Hardware flops count the recomputed forward pass when `recompute`, else equal model flops.
RunSummary summarize(const std::vector<StepRecord>& records, int warmup, const ModelSpec& model,
                     long long batch_sequences, bool recompute, int devices,
                     std::optional<double> peak_flop_per_s_per_device);

// The summary's JSON line and a CSV row (with its header) for --csv.
std::string summary_json(const RunSummary& s);
std::string csv_header();
std::string csv_row(const RunSummary& s, const RunConfig& run);

}  // namespace ws
