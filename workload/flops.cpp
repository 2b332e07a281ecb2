#include "workload/flops.hpp"

namespace ws {

namespace {
// Forward flops of one token: every block's FC layers and attention, then the LM head.
struct ForwardFlops {
  double blocks = 0, lm_head = 0;
};
ForwardFlops forward_flops_per_token(const ModelSpec& m) {
  const double S = m.sequence_length, l = m.layers, h = m.hidden, V = m.vocabulary;
  return {l * (2.0 * block_weight_count(m) + 4.0 * S * h), 2.0 * V * h};
}
}  // namespace

double hardware_flops_per_step(const ModelSpec& m, const Batch& b) {
  const ForwardFlops f = forward_flops_per_token(m);
  return static_cast<double>(batch_tokens(m, b)) * (4.0 * f.blocks + 3.0 * f.lm_head);
}

double model_flops_per_step(const ModelSpec& m, const Batch& b) {
  const ForwardFlops f = forward_flops_per_token(m);
  return static_cast<double>(batch_tokens(m, b)) * (3.0 * f.blocks + 3.0 * f.lm_head);
}

double executed_flops_per_step(const ModelSpec& m, const Batch& b, bool recompute) {
  return recompute ? hardware_flops_per_step(m, b) : model_flops_per_step(m, b);
}

}  // namespace ws
