// The GPT-style decoder: token + position embeddings, L blocks, final LayerNorm and an LM head
// tied to the token embedding. Forward and backward are written out; the loss is the SUM of
// per-token cross-entropies on this rank, and backward takes the scale that turns it into the
// global mean (1 / global tokens), so data-parallel gradients add up exactly.
//
// Embedding / LM-head layout (our choice): the token and position embeddings are sharded like the
// residual stream they feed, by hidden features over X (hidden/Gx columns, replicated over Y). The
// tied LM head then computes partial logits from the local features, summed over X; every rank of
// the X x Y grid holds the complete logits (V x m; vocab-parallel is a later memory saving).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/model/block.hpp"

namespace ws {

template <class T>
class Gpt {
 public:
  // Registers and initialises every parameter from `seed`; tuner and grid outlive the model.
  Gpt(const ModelSpec& spec, const ProcessGrid& grid, GemmTuner<T>& tuner, std::uint64_t seed);

  // tokens and targets: sequences * seq entries each. Returns the local loss sum over the targets
  // that are not negative (a negative target, the Goldfish mask's, is left out of the loss).
  double forward(const int* tokens, const int* targets, int sequences);
  // The forward pass up to the LM head: returns the [sequences * seq x vocabulary] row-major
  // logits, complete on every rank of the X x Y grid, valid until the next forward. Row t of a
  // sequence depends on its tokens 0 .. t only (causal attention), so inference may leave the
  // tokens after t unset. Collectives are the training forward's: call it on every rank.
  const T* forward_logits(const int* tokens, int sequences);
  // Accumulates d(scale * loss sum)/d(parameters) into the gradient buffer; call after forward.
  // `ready` (optional) is called with each range of the store whose gradients are final, as soon
  // as they are (block by block, last block first, one block late so that ORS reduce-scatters can
  // finish; then the rest), so that their reduction overlaps the remaining backward pass. The
  // ranges cover the store exactly once.
  using GradientsReady = std::function<void(Tensor range)>;
  void backward(T scale, const GradientsReady& ready = {});

  ParameterStore<T>& parameters() { return store_; }
  const ParameterStore<T>& parameters() const { return store_; }
  const ModelSpec& spec() const { return spec_; }
  GemmTuner<T>& tuner() { return tuner_; }
  void set_overlap(const OverlapOptions& overlap) { overlap_ = overlap; }
  // Activation recomputation: forward keeps only each block's input; backward reruns the block's
  // forward (same kernels, same collectives, so the same values bit for bit) just before its
  // backward. Memory: one block's activations instead of L; time: one more forward pass.
  void set_recompute(bool recompute);
  bool recompute() const { return recompute_; }

 private:
  LayerContext<T> context(const char* phase) { return LayerContext<T>{store_, tuner_, grid_, overlap_, phase}; }

  ModelSpec spec_;
  int width_;  // local hidden features: hidden / Gx
  const ProcessGrid& grid_;
  GemmTuner<T>& tuner_;
  ParameterStore<T> store_;
  Tensor wte_, wpe_, lnf_gamma_, lnf_beta_;
  std::vector<Block<T>> blocks_;
  BlockScratch<T> scratch_;
  std::vector<BlockActivations<T>> activations_;  // one per block, or one shared when recomputing
  bool recompute_ = false;
  OverlapOptions overlap_{};
  int sequences_ = 0;
  std::vector<int> tokens_, targets_;
  std::vector<std::vector<T>> residual_;  // input of block l (l < L) and output of the last
  std::vector<T> final_norm_, final_mean_, final_rstd_, logits_, d_final_, d_residual_, d_residual_next_, recomputed_out_;
};

}  // namespace ws
