#include "engine/schedule/flops.hpp"

namespace ws {

double hardware_flops_per_step(const ModelSpec& m, const Batch& b) {
  const double B = static_cast<double>(b.sequences), S = m.sequence_length, l = m.layers,
               h = m.hidden, V = m.vocabulary;
  return 96.0 * B * S * l * h * h * (1.0 + S / (6.0 * h) + V / (16.0 * l * h));
}

double model_flops_per_step(const ModelSpec& m, const Batch& b) {
  const double B = static_cast<double>(b.sequences), S = m.sequence_length, l = m.layers,
               h = m.hidden, V = m.vocabulary;
  return 72.0 * B * S * l * h * h * (1.0 + S / (6.0 * h) + V / (12.0 * l * h));
}

double executed_flops_per_step(const ModelSpec& m, const Batch& b, bool recompute) {
  return recompute ? hardware_flops_per_step(m, b) : model_flops_per_step(m, b);
}

}  // namespace ws
