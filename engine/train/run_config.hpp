// What one training run is, and the check every rank performs on it before any work: a layout
// that does not match the rank count or does not divide the model and batch is rejected with one
// message that names every problem.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/input_error.hpp"
#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "workload/step_schedule.hpp"
#include "engine/train/goldfish.hpp"

namespace ws {

struct AdamWConfig {
  double learning_rate = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double epsilon = 1e-8;
  double weight_decay = 0.1;
  double clip_norm = 1.0;  // global gradient-norm clip; <= 0 disables clipping
};

struct RunConfig {
  ModelSpec model;
  Layout layout;
  long long batch_sequences = 0;  // global sequences per step
  std::uint64_t seed = 0;
  AdamWConfig optimizer;
  bool tune_gemm = true;
  // The step's switches: recomputation (--recompute) and the overlap schemes OAR, ORS, OAG and
  // the data-parallel all-reduce started block by block during backward (our choice; the sources
  // reduce after backward). The engine trains in fp32.
  StepScheduleOptions schedule{};
  GoldfishOptions goldfish{};  // Goldfish loss: off unless goldfish.k > 0
};

// Throws InputError listing every problem. Pure function of its arguments, so every rank reaches
// the same verdict without communicating. Sizes are bounded so that no index product of the
// engine overflows (each dimension at most kMaxDimension, a rank's tokens at most 2^31 - 1).
void validate_run(const RunConfig& run, int world_size);
inline constexpr long long kMaxDimension = 1 << 24;

// Bytes one rank allocates for the run: sharded weights, gradients, AdamW moments, activations
// and communication buffers (workload/memory.hpp, fp32), plus the engine's complete
// logits and their gradient (tokens of the rank x vocabulary, twice).
Bytes engine_memory_bytes(const RunConfig& run);

}  // namespace ws
