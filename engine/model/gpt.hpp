// The decoder: token (+ learned position) embeddings, L blocks, a final norm and an LM head, tied
// to the token embedding (GPT-2) or its own weight (Llama; docs/models.md). Forward and backward are written out; the loss is the SUM of
// per-token cross-entropies on this rank, and backward takes the scale that turns it into the
// global mean (1 / global tokens), so data-parallel gradients add up exactly.
//
// Embedding / LM-head layout (our choice): the token and position embeddings are sharded like the
// residual stream they feed, by hidden features over X (hidden/Gx columns, replicated over Y). The
// tied LM head then computes partial logits from the local features, summed over X; every rank of
// the X x Y grid holds the complete logits (V x m). Layouts that split the vocabulary
// (Layout::vocabulary_parallel: Megatron-LM's tp, FSDP's tp, stages with Gy > 1) hold V / Gy rows
// of the embedding and head on each Y rank: lookups summed over Y, logits of the rank's columns,
// the loss from row maxima and sums all-reduced over Y (Megatron-LM's vocab_parallel_cross_entropy).
//
// Pipeline stages (Layout::pipeline, workload/pipeline.hpp): a rank holds its stage's blocks only,
// the embedding on the first stage and the final norm and LM head on the last (with tied
// embeddings the last stage keeps a copy of wte whose gradient the two stages exchange and sum, as
// Megatron-LM does). The stage schedule runs each micro-batch's forward and backward of each model
// chunk; a micro-batch's activations are held from its forward to its backward, so a stage holds
// those of the micro-batches in flight (1F1B: at most pp - stage).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "engine/model/block.hpp"
#include "engine/model/schedule_runner.hpp"
#include "workload/pipeline.hpp"
#include "workload/step_schedule.hpp"

namespace ws {

template <class T>
class Gpt final : public OpHandler<T> {
 public:
  // Registers and initialises every parameter from `seed`; tuner and grid outlive the model.
  Gpt(const ModelSpec& spec, const ProcessGrid& grid, GemmTuner<T>& tuner, std::uint64_t seed);

  // The model passes below run without pipeline stages (evaluation and tests); a pipelined layout
  // trains through the stage schedule only. tokens and targets: sequences * seq entries each.
  // Returns the local loss sum over the targets
  // that are not negative (a negative target, the Goldfish mask's, is left out of the loss).
  double forward(const int* tokens, const int* targets, int sequences);
  // The forward pass up to the LM head: returns the [sequences * seq x vocabulary] row-major
  // logits, complete on every rank of the X x Y grid, valid until the next forward. Row t of a
  // sequence depends on its tokens 0 .. t only (causal attention), so inference may leave the
  // tokens after t unset. Collectives are the training forward's: call it on every rank.
  const T* forward_logits(const int* tokens, int sequences);
  // Accumulates d(scale * loss sum)/d(parameters) into the gradient buffer; call after forward.
  void backward(T scale);

  // For a schedule the caller runs (the trainer's step): the batch the next ops see (all of the
  // step's micro-batches), with the backward's scale, and then the model's ops; the loss sum over
  // the micro-batches whose cross-entropy has run (the last stage's).
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
  // One micro-batch's forward state on this stage, kept for its backward: the inputs of its
  // blocks and the output of the chunk's last (residual[l] is block l's input; only this stage's
  // are sized), the blocks' activations (unless recomputed), and on the last stage the final
  // norm's output and statistics and the logits. A step without micro-batches has one.
  struct MicroBatchState {
    std::vector<std::vector<T>> residual;
    std::vector<BlockActivations<T>> activations;  // per block (empty when recomputing)
    std::vector<T> final_norm, final_mean, final_rstd, logits;
    std::vector<T> final_gathered;  // sequence parallelism: the final norm's output gathered over Y
    std::vector<T> row_max, target_logit, sum_exp;  // the vocabulary-parallel loss's row sums
  };
  // A pipeline action's (model chunk, micro-batch); (-1, -1) outside pipelines.
  using ActionKey = std::pair<int, int>;
  static ActionKey key_of(const StepOp& op) { return {op.chunk, op.micro_batch}; }

  LayerContext<T> context() { return LayerContext<T>{store_, tuner_, grid_}; }
  const StepSchedule& pass(int sequences, ModelPass pass);
  Block<T>& block(int layer) { return blocks_[static_cast<std::size_t>(block_index_[static_cast<std::size_t>(layer)])]; }
  // The blocks [first, end) of the op's model chunk, and whether it embeds or ends in the head.
  BlockRange chunk_of(const StepOp& op) const;
  bool first_chunk(const StepOp& op) const;
  bool last_chunk(const StepOp& op) const;
  // The state of the op's action: made ready for its forward on first use, freed for another
  // micro-batch once its backward is over.
  MicroBatchState& state(const StepOp& op);
  void release_finished(const StepOp& op);
  int rows() const { return micro_sequences_ * spec_.sequence_length; }
  // The residual stream's rows on this rank: all of the micro-batch's, or 1/Gy of them with
  // sequence parallelism.
  int shard_rows() const { return rows() / sequence_split_; }
  const int* tokens(const StepOp& op) const;
  const int* targets(const StepOp& op) const;
  BlockBuffers<T> block_buffers(const StepOp& op);
  CollectiveBuffers<T> transfer_buffers(const StepOp& op);
  void compute_norm(const StepOp& op);

  ModelSpec spec_;
  int width_;  // local hidden features: hidden / Gx
  const ProcessGrid& grid_;
  GemmTuner<T>& tuner_;
  ParameterStore<T> store_;
  // What this rank's stage holds (all of it without pipeline stages): the embedding (first stage),
  // the final norm and LM head (last stage; with tied embeddings the head is a copy of wte there).
  bool embeds_ = true, heads_ = true;
  // A vocabulary-parallel LM head and embedding (Layout::vocabulary_parallel: Megatron-LM's and
  // torchtitan's over tp = Gy): this rank holds rows [vocab_first_, vocab_first_ + vocab_local_).
  bool vocab_parallel_ = false;
  int sequence_split_ = 1;  // Gy with sequence parallelism (Layout::sequence_parallel), else 1
  int vocab_first_ = 0, vocab_local_ = 0;
  Tensor wte_, wpe_, lnf_gamma_, lnf_beta_, lm_head_;  // empty when absent on this stage
  const T* position_table() const { return wpe_.size > 0 ? store_.value(wpe_) : nullptr; }
  Tensor head() const { return spec_.tied_embeddings ? wte_ : lm_head_; }
  std::vector<Block<T>> blocks_;   // this stage's blocks, in layer order
  std::vector<int> block_index_;   // per layer: its place in blocks_, -1 on another stage
  BlockScratch<T> scratch_;
  BlockActivations<T> recomputed_;  // the one set of activations when recomputing
  StepScheduleOptions options_{};
  struct Pass {
    int sequences;
    ModelPass pass;
    StepSchedule schedule;
  };
  std::vector<Pass> passes_;  // the model passes built so far (training and evaluation sizes)
  ScheduleRunner<T> runner_;
  int sequences_ = 0, micro_sequences_ = 0;
  T scale_ = 1;
  double loss_sum_ = 0;
  std::vector<int> tokens_, targets_;
  std::vector<MicroBatchState> states_;
  std::map<ActionKey, std::size_t> state_of_;  // the actions whose forward state is held
  std::vector<std::size_t> free_states_;
  std::optional<ActionKey> in_backward_;       // the action whose backward ran last
  // The gradient of the micro-batch's block outputs received from the next stage, by action.
  std::map<ActionKey, std::vector<T>> received_gradient_;
  std::vector<std::vector<T>> spare_gradients_;
  std::vector<T> received_embedding_gradient_;  // the other stage's tied-embedding gradient
  // The gradient of block l's input lives in residual_grad_[l % 2]: block l reads its output's and
  // writes its input's.
  std::array<std::vector<T>, 2> residual_grad_;
  std::vector<T> d_final_, recomputed_out_;
  // Sequence parallelism: the embedding's full-sequence partial sum before its reduce-scatter, the
  // residual gradient gathered for the embedding's backward, the LM head's dX before its
  // reduce-scatter.
  std::vector<T> embedding_partial_, embedding_gradient_, d_final_gathered_;
};

}  // namespace ws
