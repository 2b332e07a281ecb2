// Per-device memory of a training run under a 4D layout: sharded weights, gradients and optimizer
// state, activations (with or without recomputation) and communication buffers.
#pragma once

#include "engine/schedule/layout.hpp"
#include "engine/schedule/model.hpp"

namespace ws {

struct MemoryEstimate {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;  // gathered weight blocks (incl. OAG prefetch) and collective scratch
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes;
  }
};

// bytes_per_element: 2 for bf16/fp16 mixed precision (fp32 master weights + Adam m, v in the
// optimizer state), 4 for fp32 training.
MemoryEstimate estimate_memory(const ModelSpec& model, const Batch& batch, const Layout& layout,
                               int bytes_per_element, bool recompute);

}  // namespace ws
