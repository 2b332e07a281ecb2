// Token + position embedding lookup for `sequences` sequences of `seq` tokens each.
#pragma once

namespace ws {

// out[s*seq + p] = wte[tokens[s*seq + p]] + wpe[p]; rows of width `hidden`. wpe (and dwpe) may be
// null: a model with rotary positions has no position table.
template <class T>
void embedding_forward(const int* tokens, const T* wte, const T* wpe, T* out, int sequences, int seq, int hidden);

// Accumulates (+=) the row gradients into dwte and dwpe.
template <class T>
void embedding_backward(const int* tokens, const T* dout, T* dwte, T* dwpe, int sequences, int seq, int hidden);

// The same with the token table split over the vocabulary: this rank holds rows [first, first +
// rows) of it; a token outside them contributes a zero row (the shards' sum over Y completes the
// lookup), and wpe, when given, is added (by one shard only: the caller passes null elsewhere).
template <class T>
void embedding_shard_forward(const int* tokens, const T* wte, int first, int rows, const T* wpe, T* out, int sequences,
                             int seq, int hidden);
template <class T>
void embedding_shard_backward(const int* tokens, const T* dout, T* dwte, int first, int rows, T* dwpe, int sequences,
                              int seq, int hidden);

}  // namespace ws
