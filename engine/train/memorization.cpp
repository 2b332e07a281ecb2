#include "engine/train/memorization.hpp"

#include <cstddef>
#include <vector>

namespace ws {

template <class T>
int greedy_token(const T* logits, int count) {
  int best = 0;
  for (int i = 1; i < count; ++i)
    if (logits[i] > logits[best]) best = i;
  return best;
}

template <class T>
double evaluate_loss(Gpt<T>& model, const ProcessGrid& grid, const TokenSource& source, int sequences) {
  const int seq = model.spec().sequence_length;
  const TokenBatch batch = load_batch(source, 0, batch_shard(grid.layout(), grid.coords(), sequences), seq);
  double loss = model.forward(batch.inputs.data(), batch.targets.data(), batch.sequences);
  grid.batch_group().all_reduce_sum(&loss, 1);
  return loss / (static_cast<double>(sequences) * seq);
}

template <class T>
MemorizationResult evaluate_memorization(Gpt<T>& model, const ProcessGrid& grid, const TokenSource& source,
                                         const MemorizationOptions& options) {
  const int seq = model.spec().sequence_length, vocabulary = model.spec().vocabulary;
  const int p = options.prefix, l = options.length;
  const TokenBatch text = load_batch(source, 0, batch_shard(grid.layout(), grid.coords(), options.sequences), seq);
  const int n = text.sequences;
  // Sequence tokens: inputs[0 .. seq) then the last target; position t + 1 of the text is
  // targets[t].
  auto text_token = [&](int s, int position) {
    const std::size_t row = static_cast<std::size_t>(s) * seq;
    return position == 0 ? text.inputs[row] : text.targets[row + position - 1];
  };
  // Positions P .. P+L-1 are generated; the ones after the current position are never read by
  // the rows we look at (causal attention), so they keep the text's tokens until overwritten.
  std::vector<int> tokens = text.inputs;
  const bool picks = grid.coords().x == 0 && grid.coords().y == 0;
  std::vector<int> chosen(static_cast<std::size_t>(n));
  std::vector<long long> correct_per_sequence(static_cast<std::size_t>(n), 0);
  for (int j = 0; j < l; ++j) {
    const int position = p + j;  // the token predicted by logits row position - 1
    const T* logits = model.forward_logits(tokens.data(), n);
    for (int s = 0; s < n; ++s) {
      const T* row = logits + (static_cast<std::size_t>(s) * seq + position - 1) * vocabulary;
      chosen[s] = picks ? greedy_token(row, vocabulary) : 0;
    }
    grid.group(CommGroup::x).all_reduce_sum(chosen.data(), chosen.size());
    grid.group(CommGroup::y).all_reduce_sum(chosen.data(), chosen.size());
    for (int s = 0; s < n; ++s) {
      if (chosen[s] == text_token(s, position)) ++correct_per_sequence[s];
      if (position < seq) tokens[static_cast<std::size_t>(s) * seq + position] = chosen[s];
    }
  }
  long long counts[2] = {0, 0};  // exact matches, correct tokens
  for (long long c : correct_per_sequence) {
    counts[0] += c == l ? 1 : 0;
    counts[1] += c;
  }
  grid.batch_group().all_reduce_sum(counts, 2);
  MemorizationResult result;
  result.sequences = options.sequences;
  result.exact_matches = counts[0];
  result.correct_tokens = counts[1];
  result.length = l;
  result.loss = evaluate_loss(model, grid, source, options.sequences);
  return result;
}

template int greedy_token<float>(const float*, int);
template int greedy_token<double>(const double*, int);
template double evaluate_loss<float>(Gpt<float>&, const ProcessGrid&, const TokenSource&, int);
template double evaluate_loss<double>(Gpt<double>&, const ProcessGrid&, const TokenSource&, int);
template MemorizationResult evaluate_memorization<float>(Gpt<float>&, const ProcessGrid&, const TokenSource&,
                                                         const MemorizationOptions&);
template MemorizationResult evaluate_memorization<double>(Gpt<double>&, const ProcessGrid&, const TokenSource&,
                                                          const MemorizationOptions&);

}  // namespace ws
