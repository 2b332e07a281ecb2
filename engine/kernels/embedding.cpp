#include "engine/kernels/embedding.hpp"

#include <algorithm>

#include <cstddef>

namespace ws {

template <class T>
void embedding_forward(const int* tokens, const T* wte, const T* wpe, T* out, int sequences, int seq, int hidden) {
  for (int s = 0; s < sequences; ++s)
    for (int p = 0; p < seq; ++p) {
      const std::size_t row = static_cast<std::size_t>(s) * seq + p;
      const T* te = wte + static_cast<std::size_t>(tokens[row]) * hidden;
      T* o = out + row * hidden;
      if (wpe == nullptr) {  // rotary positions: no table
        for (int i = 0; i < hidden; ++i) o[i] = te[i];
        continue;
      }
      const T* pe = wpe + static_cast<std::size_t>(p) * hidden;
      for (int i = 0; i < hidden; ++i) o[i] = te[i] + pe[i];
    }
}

template <class T>
void embedding_backward(const int* tokens, const T* dout, T* dwte, T* dwpe, int sequences, int seq, int hidden) {
  for (int s = 0; s < sequences; ++s)
    for (int p = 0; p < seq; ++p) {
      const std::size_t row = static_cast<std::size_t>(s) * seq + p;
      const T* d = dout + row * hidden;
      T* te = dwte + static_cast<std::size_t>(tokens[row]) * hidden;
      for (int i = 0; i < hidden; ++i) te[i] += d[i];
      if (dwpe == nullptr) continue;
      T* pe = dwpe + static_cast<std::size_t>(p) * hidden;
      for (int i = 0; i < hidden; ++i) pe[i] += d[i];
    }
}

template <class T>
void embedding_shard_forward(const int* tokens, const T* wte, int first, int rows, const T* wpe, T* out, int sequences,
                             int seq, int hidden) {
  for (int s = 0; s < sequences; ++s)
    for (int p = 0; p < seq; ++p) {
      const std::size_t row = static_cast<std::size_t>(s) * seq + p;
      T* o = out + row * hidden;
      const int t = tokens[row] - first;
      if (t >= 0 && t < rows) {
        const T* te = wte + static_cast<std::size_t>(t) * hidden;
        for (int i = 0; i < hidden; ++i) o[i] = te[i];
      } else {
        std::fill(o, o + hidden, T(0));
      }
      if (wpe == nullptr) continue;
      const T* pe = wpe + static_cast<std::size_t>(p) * hidden;
      for (int i = 0; i < hidden; ++i) o[i] += pe[i];
    }
}

template <class T>
void embedding_shard_backward(const int* tokens, const T* dout, T* dwte, int first, int rows, T* dwpe, int sequences,
                              int seq, int hidden) {
  for (int s = 0; s < sequences; ++s)
    for (int p = 0; p < seq; ++p) {
      const std::size_t row = static_cast<std::size_t>(s) * seq + p;
      const T* d = dout + row * hidden;
      const int t = tokens[row] - first;
      if (t >= 0 && t < rows) {
        T* te = dwte + static_cast<std::size_t>(t) * hidden;
        for (int i = 0; i < hidden; ++i) te[i] += d[i];
      }
      if (dwpe == nullptr) continue;
      T* pe = dwpe + static_cast<std::size_t>(p) * hidden;
      for (int i = 0; i < hidden; ++i) pe[i] += d[i];
    }
}

template void embedding_shard_forward<float>(const int*, const float*, int, int, const float*, float*, int, int, int);
template void embedding_shard_forward<double>(const int*, const double*, int, int, const double*, double*, int, int,
                                              int);
template void embedding_shard_backward<float>(const int*, const float*, float*, int, int, float*, int, int, int);
template void embedding_shard_backward<double>(const int*, const double*, double*, int, int, double*, int, int, int);

template void embedding_forward<float>(const int*, const float*, const float*, float*, int, int, int);
template void embedding_forward<double>(const int*, const double*, const double*, double*, int, int, int);
template void embedding_backward<float>(const int*, const float*, float*, float*, int, int, int);
template void embedding_backward<double>(const int*, const double*, double*, double*, int, int, int);

}  // namespace ws
