#include "engine/kernels/cross_entropy.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace ws {

template <class T>
double cross_entropy_forward(T* logits, const int* targets, int rows, int vocabulary) {
  double loss = 0;
  for (int r = 0; r < rows; ++r) {
    T* row = logits + static_cast<std::size_t>(r) * vocabulary;
    const T max = *std::max_element(row, row + vocabulary);  // subtract the max: no overflow
    T sum = 0;
    for (int i = 0; i < vocabulary; ++i) {
      row[i] = std::exp(row[i] - max);
      sum += row[i];
    }
    for (int i = 0; i < vocabulary; ++i) row[i] /= sum;
    if (targets[r] >= 0) loss -= std::log(static_cast<double>(row[targets[r]]));
  }
  return loss;
}

template <class T>
void cross_entropy_backward(T* probs, const int* targets, int rows, int vocabulary, T scale) {
  for (int r = 0; r < rows; ++r) {
    T* row = probs + static_cast<std::size_t>(r) * vocabulary;
    if (targets[r] < 0) {
      std::fill(row, row + vocabulary, T(0));
      continue;
    }
    row[targets[r]] -= T(1);
    for (int i = 0; i < vocabulary; ++i) row[i] *= scale;
  }
}

template double cross_entropy_forward<float>(float*, const int*, int, int);
template double cross_entropy_forward<double>(double*, const int*, int, int);
template void cross_entropy_backward<float>(float*, const int*, int, int, float);
template void cross_entropy_backward<double>(double*, const int*, int, int, double);

}  // namespace ws
