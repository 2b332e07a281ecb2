// Closed-form estimate of one training step for one layout: the engine's step schedule on the
// step simulator with every collective priced alone (step_estimate.cpp says why), the result type
// every evaluator fills, and the functions that produce it. Fast enough to score every layout of
// 8,192 devices.
#pragma once

#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "workload/memory.hpp"
#include "workload/model.hpp"
#include "sim/pricing/job_network.hpp"
#include "sim/step/step_options.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

struct SimulatedStep;

// Where each part of the step goes. Exposed communication is what the overlap schemes could not
// hide behind computation; total = compute + sum of exposed parts.
struct StepBreakdown {
  Time compute;
  Time exposed_x;
  Time exposed_y;
  Time exposed_z;
  Time exposed_data;
  // Time lost to the machine's variability: the slowest device's extra compute and waits for a
  // group's slowest member at synchronizations (sim/step: StepOptions::variability).
  Time skew;
  // A pipelined layout's last stage: idle for its peers (the bubble) and waiting for transfers
  // between stages.
  Time pipeline;
  // The part of `pipeline` spent waiting for stage transfers (the rest is the bubble); not added
  // again in total().
  Time pipeline_transfer;
  Time total() const { return compute + exposed_x + exposed_y + exposed_z + exposed_data + skew + pipeline; }
};

// A simulated step's parts in the breakdown's terms: data x Z's exposed time counts as data.
StepBreakdown breakdown_of(const SimulatedStep& simulated);

struct LayoutEstimate {
  Layout layout;
  StepBreakdown step;
  MemoryEstimate memory;
  double hardware_flops = 0;         // per step, whole job (with recomputation)
  double model_flops = 0;            // per step, whole job (without recomputation)
  double sustained_flops_per_s = 0;  // executed flops / step time, whole job
  double hardware_peak_fraction = 0; // hardware flops / (step * devices * peak)
  double model_peak_fraction = 0;    // model flops / (step * devices * peak)  (MFU)
  bool fits_memory = false;
  // Set when `step` comes from the flow network, which re-ranks the closed form's top k: the
  // closed-form step it replaced, so a candidates table shows both. Zero when `step` is the closed
  // form itself.
  Time analytic_step;
  // Set with analytic_step: the closed form's breakdown, the same schedule with every collective
  // priced alone, so step - isolated is what collectives in flight together cost each other
  // (contention). Zero otherwise.
  StepBreakdown isolated;
};

LayoutEstimate estimate_step(const Machine& machine, const ModelSpec& model, const Batch& batch,
                             const Layout& layout, const StepOptions& options);
// The same on a job network the caller keeps (plan_layouts scores many layouts of one job size:
// placement, topology and the priced programs of each group shape are computed once).
LayoutEstimate estimate_step(JobNetwork& network, const ModelSpec& model, const Batch& batch, const Layout& layout,
                             const StepOptions& options);

}  // namespace ws
