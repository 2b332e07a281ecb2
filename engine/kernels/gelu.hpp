// GELU activation, tanh approximation (as GPT-2), elementwise.
#pragma once

#include <cstddef>

namespace ws {

// Also stores tanh(sqrt(2/pi) (x + 0.044715 x^3)) in `tanh_out` for the backward pass: tanh is the
// costly part, and recomputing it there would double it.
template <class T>
void gelu_forward(const T* x, T* y, T* tanh_out, std::size_t count);

// dx = dy * gelu'(x) (overwrites dx; dx may alias dy), from the forward pass's tanh values.
template <class T>
void gelu_backward(const T* x, const T* tanh_in, const T* dy, T* dx, std::size_t count);

}  // namespace ws
