// The 1-rank run an equality test compares a layout with: its steps and the trainer after them.
// Every rank of the test computes it, once per configuration for all the layouts it is compared
// with (cached_serial_run: the same inputs give the same run).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/train/trainer.hpp"

namespace ws {

template <class T>
struct SerialRun {
  SerialRun(const RunConfig& config, int step_count)
      : run(config), source(run.seed, run.model.vocabulary), grid(ProcessGrid::serial()), trainer(run, grid, source) {
    for (int s = 0; s < step_count; ++s) steps.push_back(trainer.step());
  }
  const StepResult& step(int s) const { return steps[static_cast<std::size_t>(s)]; }
  RunConfig run;
  SyntheticTokens source;
  ProcessGrid grid;
  Trainer<T> trainer;
  std::vector<StepResult> steps;
};

// The run of `config` over `step_count` steps, made on first use under `key` (which must name
// everything in `config` that the callers vary) and kept for the test program's life.
template <class T>
SerialRun<T>& cached_serial_run(const std::string& key, const RunConfig& config, int step_count) {
  static std::map<std::string, std::unique_ptr<SerialRun<T>>> runs;
  std::unique_ptr<SerialRun<T>>& run = runs[key + "/" + std::to_string(step_count)];
  if (!run) run = std::make_unique<SerialRun<T>>(config, step_count);
  return *run;
}

}  // namespace ws
