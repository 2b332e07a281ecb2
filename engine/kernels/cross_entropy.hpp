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

}  // namespace ws
