// GPU frameworks run attention as one fused kernel whose S x S scores stay on chip, so neither the
// score GEMMs' shape efficiency nor the softmax's memory traffic prices it: its measured rate does.
#include "sim/compute/fused_attention.hpp"

namespace ws {

double causal_attention_flops(double sequence, double head_dim, AttentionPass pass) {
  const double forward = 2.0 * sequence * sequence * head_dim;
  return pass == AttentionPass::forward ? forward : 2.5 * forward;
}

std::optional<Time> fused_attention_time(const DeviceSpec& device, Precision precision, double sequence,
                                         double head_dim, double calls, AttentionPass pass) {
  if (!device.fused_attention) return std::nullopt;
  const double efficiency = pass == AttentionPass::forward ? device.fused_attention->forward_efficiency
                                                           : device.fused_attention->backward_efficiency;
  return compute_time(calls * causal_attention_flops(sequence, head_dim, pass), peak(device, precision) * efficiency);
}

}  // namespace ws
