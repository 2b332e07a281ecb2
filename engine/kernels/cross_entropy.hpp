// Softmax cross-entropy over a row-major [rows x vocabulary] logit matrix.
#pragma once

namespace ws {

// Overwrites `logits` with the softmax probabilities and returns the SUM over rows of
// -log p[target]. Summing (not averaging) lets data-parallel ranks add their parts exactly.
// A row whose target is negative (engine/train/goldfish.hpp: kIgnoredTarget) is left out of the
// sum.
template <class T>
double cross_entropy_forward(T* logits, const int* targets, int rows, int vocabulary);

// Turns the probabilities left by the forward pass into d(loss)/d(logits) in place, for
// loss = scale * sum of the per-row losses (scale = 1 / global token count for a mean). A row
// with a negative target gets a zero gradient.
template <class T>
void cross_entropy_backward(T* probs, const int* targets, int rows, int vocabulary, T scale);

// The same over a vocabulary split into column shards (Megatron-LM's vocab_parallel_cross_entropy):
// this rank holds logits [rows x local] of the vocabulary's columns [first, first + local).
// 1. cross_entropy_shard_max: each row's maximum here (then the maximum over the shards).
// 2. cross_entropy_shard_sums: with the global maxima, overwrites the logits with exp(logit - max)
//    and gives each row's sum of those and its target's logit when the target is here (else 0),
//    both then summed over the shards.
// 3. cross_entropy_shard_loss: the SUM over rows with a target of log(sum) + max - target logit.
// 4. cross_entropy_shard_backward: d(scale * loss)/d(logits) in place of the exponents.
template <class T>
void cross_entropy_shard_max(const T* logits, int rows, int local, T* max);
template <class T>
void cross_entropy_shard_sums(T* logits, const int* targets, int rows, int local, int first, const T* max,
                              T* target_logit, T* sum_exp);
template <class T>
double cross_entropy_shard_loss(const int* targets, int rows, const T* max, const T* target_logit, const T* sum_exp);
template <class T>
void cross_entropy_shard_backward(T* exps, const int* targets, int rows, int local, int first, const T* sum_exp,
                                  T scale);

}  // namespace ws
