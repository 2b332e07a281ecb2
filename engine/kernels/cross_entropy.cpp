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

template <class T>
void cross_entropy_shard_max(const T* logits, int rows, int local, T* max) {
  for (int r = 0; r < rows; ++r) {
    const T* row = logits + static_cast<std::size_t>(r) * local;
    max[r] = *std::max_element(row, row + local);
  }
}

template <class T>
void cross_entropy_shard_sums(T* logits, const int* targets, int rows, int local, int first, const T* max,
                              T* target_logit, T* sum_exp) {
  for (int r = 0; r < rows; ++r) {
    T* row = logits + static_cast<std::size_t>(r) * local;
    const int t = targets[r] - first;
    target_logit[r] = targets[r] >= 0 && t >= 0 && t < local ? row[t] : T(0);
    T sum = 0;
    for (int i = 0; i < local; ++i) {
      row[i] = std::exp(row[i] - max[r]);
      sum += row[i];
    }
    sum_exp[r] = sum;
  }
}

template <class T>
double cross_entropy_shard_loss(const int* targets, int rows, const T* max, const T* target_logit, const T* sum_exp) {
  double loss = 0;
  for (int r = 0; r < rows; ++r)
    if (targets[r] >= 0)
      loss += std::log(static_cast<double>(sum_exp[r])) + static_cast<double>(max[r]) -
              static_cast<double>(target_logit[r]);
  return loss;
}

template <class T>
void cross_entropy_shard_backward(T* exps, const int* targets, int rows, int local, int first, const T* sum_exp,
                                  T scale) {
  for (int r = 0; r < rows; ++r) {
    T* row = exps + static_cast<std::size_t>(r) * local;
    if (targets[r] < 0) {
      std::fill(row, row + local, T(0));
      continue;
    }
    for (int i = 0; i < local; ++i) row[i] /= sum_exp[r];
    const int t = targets[r] - first;
    if (t >= 0 && t < local) row[t] -= T(1);
    for (int i = 0; i < local; ++i) row[i] *= scale;
  }
}

#define WS_SHARD_CROSS_ENTROPY(T)                                                                          \
  template void cross_entropy_shard_max<T>(const T*, int, int, T*);                                     \
  template void cross_entropy_shard_sums<T>(T*, const int*, int, int, int, const T*, T*, T*);          \
  template double cross_entropy_shard_loss<T>(const int*, int, const T*, const T*, const T*);          \
  template void cross_entropy_shard_backward<T>(T*, const int*, int, int, int, const T*, T);
WS_SHARD_CROSS_ENTROPY(float)
WS_SHARD_CROSS_ENTROPY(double)
#undef WS_SHARD_CROSS_ENTROPY

template double cross_entropy_forward<float>(float*, const int*, int, int);
template double cross_entropy_forward<double>(double*, const int*, int, int);
template void cross_entropy_backward<float>(float*, const int*, int, int, float);
template void cross_entropy_backward<double>(double*, const int*, int, int, double);

}  // namespace ws
