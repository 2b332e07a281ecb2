// Flop counts of one training step (../shared/docs/4d-algorithm.md, "Flop counting"), used for
// percent of peak. "Hardware" flops include the recomputed forward pass; "model" flops do not.
#pragma once

#include "engine/schedule/model.hpp"

namespace ws {

// 96 B S l h^2 (1 + S/(6h) + V/(16 l h)): forward + backward + recomputed forward.
double hardware_flops_per_step(const ModelSpec& model, const Batch& batch);
// 72 B S l h^2 (1 + S/(6h) + V/(12 l h)): forward + backward only.
double model_flops_per_step(const ModelSpec& model, const Batch& batch);
// Hardware flops if the run recomputes activations, model flops otherwise: what the device executes.
double executed_flops_per_step(const ModelSpec& model, const Batch& batch, bool recompute);

}  // namespace ws
