// Memorization, measured as in the Goldfish paper (Hans et al. 2024, section 4): prompt the model
// with the first P tokens of a training sequence, generate the next L greedily, and compare with
// the training text. Exact match: the whole continuation equals the text; token accuracy: the
// share of the L positions generated right. Every function here is collective over the process
// grid (call it on every rank) and runs under any layout: the sequences are sharded over data x Z
// like a training batch, the model's forward pass is the training one.
#pragma once

#include "engine/comm/process_grid.hpp"
#include "engine/model/gpt.hpp"
#include "engine/train/token_source.hpp"

namespace ws {

struct MemorizationOptions {
  int sequences = 0;  // N: global sequences 0 .. N-1 of the source's step 0 (its first batch)
  int prefix = 0;     // P tokens of prompt, >= 1
  int length = 0;     // L tokens generated; P + L <= the model's sequence length
};

struct MemorizationResult {
  long long sequences = 0;
  long long exact_matches = 0;   // sequences whose L generated tokens all equal the text
  long long correct_tokens = 0;  // over all N * L generated positions
  int length = 0;
  // Mean cross-entropy over every target of the N sequences (no Goldfish mask): what the model
  // assigns to the very text it may have memorized.
  double loss = 0;
  double exact_match_rate() const {
    return sequences > 0 ? static_cast<double>(exact_matches) / static_cast<double>(sequences) : 0.0;
  }
  double token_accuracy() const {
    return sequences > 0 ? static_cast<double>(correct_tokens) / (static_cast<double>(sequences) * length) : 0.0;
  }
};

// Greedy generation from the model's current parameters (ties go to the lowest token id). The
// token each step picks is taken from the rank at X = Y = 0 of each shard and shared over X and
// Y, so that all ranks feed the same tokens even where their logits differ in the last bit.
template <class T>
MemorizationResult evaluate_memorization(Gpt<T>& model, const ProcessGrid& grid, const TokenSource& source,
                                         const MemorizationOptions& options);

// Mean cross-entropy (no mask) over the targets of global sequences 0 .. sequences-1 of the
// source's step 0; `sequences` must divide over Gdata * Gz.
template <class T>
double evaluate_loss(Gpt<T>& model, const ProcessGrid& grid, const TokenSource& source, int sequences);

// The index of the largest of `count` values; the lowest index among equals.
template <class T>
int greedy_token(const T* logits, int count);

}  // namespace ws
