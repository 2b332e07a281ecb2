// The engine's element-wise kernels whose per-element arithmetic (a tanh, an exp, a row reduction)
// can cost more than their memory traffic: on a CPU core GELU's tanh, not DRAM, sets its time. A
// machine file may give each one's throughput (sim/machine), the step schedule says how many
// elements each of its ops processes, and the step simulator prices an op at the slower of its
// memory traffic and its arithmetic.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace ws {

enum class ElementwiseKernel {
  gelu_forward,           // engine/kernels/gelu.cpp, per element of the MLP's 4h activations
  gelu_backward,
  layer_norm_forward,     // engine/kernels/layer_norm.cpp, per element of the rows x width input
  layer_norm_backward,
  softmax_forward,        // engine/kernels/attention.cpp minus its GEMMs, per element of S x S scores
  softmax_backward,
  cross_entropy_forward,  // engine/kernels/cross_entropy.cpp, per logit
  cross_entropy_backward,
  swiglu_forward,         // engine/kernels/swiglu.cpp, per output element (the Llama family's MLP)
  swiglu_backward,
  rms_norm_forward,       // engine/kernels/rms_norm.cpp, per element of the rows x width input
  rms_norm_backward,
};
inline constexpr int kElementwiseKernels = 12;

inline constexpr std::array<std::string_view, kElementwiseKernels> kElementwiseKernelNames{
    "gelu_forward",          "gelu_backward",          "layer_norm_forward", "layer_norm_backward",
    "softmax_forward",       "softmax_backward",       "cross_entropy_forward", "cross_entropy_backward",
    "swiglu_forward",        "swiglu_backward",        "rms_norm_forward",   "rms_norm_backward"};

// A machine file measured before the Llama family's kernels existed gives no rate for them; the
// step then prices each at the rate of the GPT kernel it replaces (an estimate, said in
// docs/models.md): SwiGLU at GELU's, RMSNorm at LayerNorm's. Others stand for themselves.
inline ElementwiseKernel stand_in(ElementwiseKernel kernel) {
  switch (kernel) {
    case ElementwiseKernel::swiglu_forward: return ElementwiseKernel::gelu_forward;
    case ElementwiseKernel::swiglu_backward: return ElementwiseKernel::gelu_backward;
    case ElementwiseKernel::rms_norm_forward: return ElementwiseKernel::layer_norm_forward;
    case ElementwiseKernel::rms_norm_backward: return ElementwiseKernel::layer_norm_backward;
    default: return kernel;
  }
}

inline std::string_view to_string(ElementwiseKernel kernel) {
  return kElementwiseKernelNames[static_cast<std::size_t>(kernel)];
}

inline std::optional<ElementwiseKernel> parse_elementwise_kernel(std::string_view name) {
  for (int i = 0; i < kElementwiseKernels; ++i)
    if (kElementwiseKernelNames[static_cast<std::size_t>(i)] == name) return static_cast<ElementwiseKernel>(i);
  return std::nullopt;
}

}  // namespace ws
