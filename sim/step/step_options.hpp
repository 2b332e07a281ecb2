// Switches of one simulated training step: the schedule's (precision, recomputation, the overlap
// schemes: workload/step_schedule.hpp StepScheduleOptions) and the machine-side ones (which
// nodes the job gets, variability). Defaults are a GPU training run's: bf16, recompute, no
// data-parallel overlap.
#pragma once

#include "workload/step_schedule.hpp"
#include "sim/machine/machine.hpp"
#include "sim/pricing/job_network.hpp"

namespace ws {

struct StepOptions : StepScheduleOptions {
  StepOptions() {
    precision = Precision::bf16;
    recompute = true;
    overlap_data_parallel = false;
  }
  NodeAllocation allocation = NodeAllocation::contiguous;
  // Ranks on each of the job's nodes, on its first devices (srun --ntasks-per-node); 0: every
  // device of each node. Fewer spread the job over more nodes: fewer ranks share a node's NICs and
  // compute beside each other, and groups that fit a node may not.
  int ranks_per_node = 0;
  // Rank skew and noise of the machine file's `variability` (the slowest device paces the job; a
  // synchronizing group waits for its slowest member); off: identical, noiseless devices.
  bool variability = true;
};

}  // namespace ws
