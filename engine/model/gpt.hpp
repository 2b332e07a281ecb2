// The decoder: token (+ learned position) embeddings, L blocks, a final norm and an LM head, tied
// to the token embedding (GPT-2) or its own weight (Llama; docs/models.md). Forward and backward are written out; the loss is the SUM of
// per-token cross-entropies on this rank, and backward takes the scale that turns it into the
// global mean (1 / global tokens), so data-parallel gradients add up exactly.
//
// Embedding / LM-head layout (our choice): the token and position embeddings are sharded like the
// residual stream they feed, by hidden features over X (hidden/Gx columns, replicated over Y). The
// tied LM head then computes partial logits from the local features, summed over X; every rank of
// the X x Y grid holds the complete logits (V x m; vocab-parallel is a later memory saving).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/model/block.hpp"
#include "engine/model/schedule_runner.hpp"
#include "workload/step_schedule.hpp"

namespace ws {

template <class T>
class Gpt final : public OpHandler<T> {
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
  void backward(T scale);

  // For a schedule the caller runs (the trainer's step): the batch the next ops see, with the
  // backward's scale, and then the model's ops; the loss sum once the cross-entropy has run.
  void set_batch(const int* tokens, const int* targets, int sequences, T scale);
  void compute(const StepOp& op) override;
  CollectiveBuffers<T> buffers(const StepOp& op) override;
  double loss_sum() const { return loss_sum_; }

  ParameterStore<T>& parameters() { return store_; }
  const ParameterStore<T>& parameters() const { return store_; }
  const ModelSpec& spec() const { return spec_; }
  GemmTuner<T>& tuner() { return tuner_; }
  // Overlap schemes and activation recomputation: with --recompute forward keeps only each
  // block's input and backward reruns the block's forward (same kernels, same collectives, so the
  // same values bit for bit) just before its backward: one block's activations instead of L, one
  // more forward pass. The options of every schedule the model runs.
  void set_options(const StepScheduleOptions& options);
  const StepScheduleOptions& options() const { return options_; }

 private:
  LayerContext<T> context() { return LayerContext<T>{store_, tuner_, grid_}; }
  const StepSchedule& pass(int sequences, ModelPass pass);
  BlockBuffers<T> block_buffers(const StepOp& op);
  void prepare_forward();
  void compute_norm(const StepOp& op);

  ModelSpec spec_;
  int width_;  // local hidden features: hidden / Gx
  const ProcessGrid& grid_;
  GemmTuner<T>& tuner_;
  ParameterStore<T> store_;
  Tensor wte_, wpe_, lnf_gamma_, lnf_beta_, lm_head_;  // wpe_, lnf_beta_, lm_head_: empty when absent
  const T* position_table() const { return wpe_.size > 0 ? store_.value(wpe_) : nullptr; }
  Tensor head() const { return spec_.tied_embeddings ? wte_ : lm_head_; }
  std::vector<Block<T>> blocks_;
  BlockScratch<T> scratch_;
  std::vector<BlockActivations<T>> activations_;  // one per block, or one shared when recomputing
  StepScheduleOptions options_{};
  struct Pass {
    int sequences;
    ModelPass pass;
    StepSchedule schedule;
  };
  std::vector<Pass> passes_;  // the model passes built so far (training and evaluation sizes)
  ScheduleRunner<T> runner_;
  int sequences_ = 0;
  T scale_ = 1;
  double loss_sum_ = 0;
  std::vector<int> tokens_, targets_;
  std::vector<std::vector<T>> residual_;  // input of block l (l < L) and output of the last
  // The gradient of residual_[l] lives in residual_grad_[l % 2]: block l reads its output's and
  // writes its input's.
  std::array<std::vector<T>, 2> residual_grad_;
  std::vector<T> final_norm_, final_mean_, final_rstd_, logits_, d_final_, recomputed_out_;
};

}  // namespace ws
