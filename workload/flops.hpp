// Flop counts of one training step (../shared/docs/4d-algorithm.md, "Flop counting", and
// docs/model-flops.md for the model families), used for percent of peak. "Hardware" flops include
// the recomputed forward pass; "model" flops do not.
//
// Per token and layer the forward pass runs 2 W flops in its FC layers (W = block_weight_count)
// and 4 S h in attention (Q K^T and P V over the full S x S scores, as the engine computes them;
// grouped-query attention shares K and V but runs as many score GEMMs as there are query heads);
// the LM head runs 2 V h per token. Backward costs twice the forward. For the GPT family
// (W = 12 h^2) these are Narayanan et al. (SC'21, Appendix) formulas:
//   hardware = 96 B S l h^2 (1 + S/(6h) + V/(16 l h)), model = 72 B S l h^2 (1 + S/(6h) + V/(12 l h)).
#pragma once

#include "workload/model.hpp"

namespace ws {

// B S (4 l (2 W + 4 S h) + 6 V h): forward + backward + recomputed forward of every block.
double hardware_flops_per_step(const ModelSpec& model, const Batch& batch);
// B S (3 l (2 W + 4 S h) + 6 V h): forward + backward only.
double model_flops_per_step(const ModelSpec& model, const Batch& batch);
// Hardware flops if the run recomputes activations, model flops otherwise: what the device executes.
double executed_flops_per_step(const ModelSpec& model, const Batch& batch, bool recompute);

}  // namespace ws
