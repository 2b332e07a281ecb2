// Switches of one training step that change its cost: precision, recomputation, and the overlap
// schemes of ../shared/docs/4d-algorithm.md (OAR, ORS, OAG, data-parallel overlap).
#pragma once

#include "sim/machine/machine.hpp"
#include "sim/pricing/job_network.hpp"

namespace ws {

struct StepOptions {
  Precision precision = Precision::bf16;
  bool recompute = true;               // activation recomputation (hardware flop count)
  bool overlap_all_reduce = true;      // OAR: Y all-reduce of dX overlaps the dW GEMM
  bool overlap_reduce_scatter = true;  // ORS: Z reduce-scatter of dW overlaps earlier layers' backward
  bool overlap_all_gather = true;      // OAG: Z all-gather of the next layer's weights prefetched
  bool overlap_data_parallel = false;  // data-parallel all-reduce bucketed into the backward pass
  NodeAllocation allocation = NodeAllocation::contiguous;
  // Rank skew and noise of the machine file's `variability` (the slowest device paces the job; a
  // synchronizing group waits for its slowest member); off: identical, noiseless devices.
  bool variability = true;
  int bytes_per_element() const { return precision == Precision::fp32 ? 4 : 2; }
};

}  // namespace ws
