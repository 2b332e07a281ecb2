// Time of a fused attention kernel from the machine file's rates (DeviceSpec::fused_attention).
#pragma once

#include <optional>

#include "base/units.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

enum class AttentionPass { forward, backward };

// Causal attention flops per sequence and head, counted as FlashAttention counts them: forward
// 2 s^2 d (half of Q K^T and P V), backward 2.5 times the forward.
double causal_attention_flops(double sequence, double head_dim, AttentionPass pass);

// Time of `calls` (sequence, head) attentions in one fused kernel at the machine's rate; nullopt
// where the machine gives no fused rate and the engine's own attention is priced instead.
std::optional<Time> fused_attention_time(const DeviceSpec& device, Precision precision, double sequence,
                                         double head_dim, double calls, AttentionPass pass);

}  // namespace ws
