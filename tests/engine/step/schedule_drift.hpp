// Compares one traced engine step with the step schedule (workload/step_schedule.hpp): the
// engine runs the schedule's ops, so its trace must be the schedule's op list, the one the
// simulator executes. Per thread of
// the trace: compute phases in program order (the schedule's untraced work, done between spans,
// left out); collectives in issue order (their start is the issue time) with their payload bytes;
// waits, which the engine records only when the collective was still in flight, must be a
// subsequence of the schedule's.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/comm/timeline.hpp"
#include "workload/step_schedule.hpp"
#include "engine/train/run_config.hpp"
#include "engine/train/trainer.hpp"
#include "tests/engine/tiny_models.hpp"

namespace ws {

struct StepLists {
  std::vector<std::string> compute;      // compute phase names
  std::vector<std::string> collectives;  // "allreduce.x 512"
  std::vector<std::string> waits;        // "wait.allreduce.y 512"
};

inline std::string with_bytes(const std::string& name, std::uint64_t bytes) {
  return name + " " + std::to_string(bytes);
}

inline StepLists lists_of(const std::vector<TraceEvent>& events) {
  StepLists lists;
  std::vector<TraceEvent> comm;
  for (const TraceEvent& e : events) {
    if (e.comm)
      comm.push_back(e);
    else if (e.name.starts_with("wait."))
      lists.waits.push_back(with_bytes(e.name, e.bytes));
    else
      lists.compute.push_back(e.name);
  }
  // Non-blocking collectives are recorded when observed complete; their start is the issue time.
  std::stable_sort(comm.begin(), comm.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.start < b.start; });
  for (const TraceEvent& e : comm) lists.collectives.push_back(with_bytes(e.name, e.bytes));
  return lists;
}

inline StepLists lists_of(const StepSchedule& schedule) {
  StepLists lists;
  for (const StepOp& op : schedule.ops) {
    switch (op.kind) {
      case StepOpKind::compute:
        if (op.traced) lists.compute.push_back(op.name);
        break;
      case StepOpKind::collective:
        lists.collectives.push_back(with_bytes(op.name, op.bytes));
        break;
      case StepOpKind::wait:
        lists.waits.push_back(with_bytes(op.name, op.bytes));
        break;
      case StepOpKind::send:
      case StepOpKind::receive:  // the engine traces stage transfers with the collectives
        lists.collectives.push_back(with_bytes(op.name, op.bytes));
        break;
    }
  }
  return lists;
}

inline bool is_subsequence(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  auto it = whole.begin();
  for (const std::string& p : part) {
    it = std::find(it, whole.end(), p);
    if (it == whole.end()) return false;
    ++it;
  }
  return true;
}

// The option combinations the drift tests cover: all overlaps on, all off, recomputation, mixed;
// for the tiny GPT and then the tiny Llama (tests/engine/tiny_models.hpp). A layout that one of
// them cannot run (Gy above the Llama's 2 K/V heads) is the caller's to skip (validate_run).
inline std::vector<RunConfig> drift_runs(const Layout& layout) {
  std::vector<RunConfig> runs;
  for (int variant = 0; variant < 8; ++variant) {
    RunConfig run;
    run.model = variant < 4 ? tiny_gpt() : tiny_llama();
    run.layout = layout;
    run.batch_sequences = 8;
    run.seed = 5;
    const int options = variant % 4;
    const bool on = options != 1;
    run.schedule.overlap_all_reduce = run.schedule.overlap_all_gather = on;
    run.schedule.overlap_reduce_scatter = run.schedule.overlap_data_parallel = options == 3 ? false : on;
    run.schedule.recompute = options >= 2;
    runs.push_back(run);
  }
  return runs;
}

inline std::string describe(const RunConfig& run) {
  const StepScheduleOptions& o = run.schedule;
  return run.model.name + " " + to_string(run.layout) + (o.recompute ? " recompute" : "") + " OAR=" + std::to_string(o.overlap_all_reduce) +
         " ORS=" + std::to_string(o.overlap_reduce_scatter) + " OAG=" + std::to_string(o.overlap_all_gather) +
         " DP=" + std::to_string(o.overlap_data_parallel);
}

// One traced engine step of `run` on `grid`, and the schedule's lists for the same run.
inline StepLists traced_engine_step(const RunConfig& run, const ProcessGrid& grid) {
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  Trainer<float> trainer(run, grid, source);
  grid.timeline().set_tracing(true);
  trainer.step();
  return lists_of(grid.timeline().events());
}

// A pipelined layout's: the schedule of `stage`.
inline StepLists scheduled_step(const RunConfig& run, int stage = 0) {
  if (run.layout.pipelined())
    return lists_of(make_stage_schedule(run.model, run.layout, run.batch_sequences, stage, run.schedule));
  return lists_of(make_step_schedule(run.model, run.layout, run.batch_sequences, run.schedule));
}

}  // namespace ws
