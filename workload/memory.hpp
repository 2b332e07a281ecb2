// Per-device memory of a training run under a 4D layout: sharded weights, gradients and optimizer
// state, activations (with or without recomputation) and communication buffers.
#pragma once

#include "base/units.hpp"
#include "workload/layout.hpp"
#include "workload/model.hpp"

namespace ws {

// Whole bytes: a shard that is a fraction of an element on average (sizes that do not divide by
// the layout) is rounded up, as a device holds whole elements.
struct MemoryEstimate {
  Bytes weights_bytes = 0;
  Bytes gradients_bytes = 0;
  Bytes optimizer_bytes = 0;
  Bytes activations_bytes = 0;
  Bytes buffers_bytes = 0;  // gathered weight blocks (incl. OAG prefetch) and collective scratch
  Bytes total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes;
  }
};

// bytes_per_element: 2 for bf16/fp16 mixed precision (fp32 master weights + Adam m, v in the
// optimizer state), 4 for fp32 training.
MemoryEstimate estimate_memory(const ModelSpec& model, const Batch& batch, const Layout& layout,
                               int bytes_per_element, bool recompute);

}  // namespace ws
