// Ranks all layouts of a (machine, model, batch, devices) point by predicted step time.
#pragma once

#include <span>
#include <vector>

#include "sim/layout_search/layout_enumeration.hpp"
#include "sim/step/step_estimate.hpp"

namespace ws {

struct Plan {
  std::vector<LayoutEstimate> ranked;      // valid and fitting in memory, fastest first (ties: layout order)
  std::vector<LayoutEstimate> over_memory; // valid but over the device memory, fastest first
  std::vector<LayoutCandidate> invalid;    // cannot run this model/batch, with reasons
};

inline constexpr Strategy kFourD[] = {Strategy::four_d};

// Throws InputError if devices exceeds the machine or is not a multiple of nothing sensible (<1).
// `strategies`: whose layouts are ranked together (enumerate_strategy_layouts), 4D alone by default;
// the fastest 16 pipelined Megatron-LM layouts with data parallelism are priced in its other rank
// order too (order=tp-pp-dp).
Plan plan_layouts(const Machine& machine, const ModelSpec& model, const Batch& batch, int devices,
                  const StepOptions& options, std::span<const Strategy> strategies = kFourD);
// The same on a job network the caller keeps (its device count is the point's). `jobs` threads
// price the layouts (each beyond the first on a job network of its own, built alike); the plan is
// the same for any number.
Plan plan_layouts(JobNetwork& network, const ModelSpec& model, const Batch& batch, const StepOptions& options,
                  std::span<const Strategy> strategies = kFourD, int jobs = 1);

}  // namespace ws
