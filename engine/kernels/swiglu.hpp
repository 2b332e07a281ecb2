// SwiGLU (Shazeer 2020; Llama's MLP): out = silu(gate) * up, silu(x) = x * sigmoid(x). The MLP's
// first layer writes each row as [gate (width) | up (width)] (its two column groups, so one rank
// holds the gate and up values of the same features).
#pragma once

namespace ws {

// out [rows x width] from gate_up [rows x 2 width].
template <class T>
void swiglu_forward(const T* gate_up, T* out, int rows, int width);

// d_gate_up [rows x 2 width] (overwritten) from dout [rows x width]: dup = dout * silu(gate),
// dgate = dout * up * silu'(gate), silu'(x) = sigmoid(x) (1 + x (1 - sigmoid(x))).
template <class T>
void swiglu_backward(const T* gate_up, const T* dout, T* d_gate_up, int rows, int width);

}  // namespace ws
