#include "engine/model/gpt.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/kernels/cross_entropy.hpp"
#include "engine/kernels/embedding.hpp"
#include "engine/kernels/layer_norm.hpp"
#include "engine/model/rms_norm_stage.hpp"
#include "base/random.hpp"

namespace ws {

namespace {
// Initialisation streams: blocks use 4 per block from 0; the embeddings use these.
constexpr std::uint64_t kTokenEmbeddingStream = 1ULL << 32;
constexpr std::uint64_t kPositionEmbeddingStream = (1ULL << 32) + 1;
constexpr std::uint64_t kLmHeadStream = (1ULL << 32) + 2;

// Draws a full rows x full_width matrix (the same on every layout) and keeps `width` columns
// from `first_column` of `local_rows` rows from `first_row` (all rows when local_rows < 0).
template <class T>
void fill_normal_columns(T* data, int rows, int full_width, int first_column, int width, std::uint64_t seed,
                         std::uint64_t stream, double stddev, int first_row = 0, int local_rows = -1) {
  if (local_rows < 0) local_rows = rows;
  SplitMix64 rng(seed, stream);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < full_width; ++c) {
      const double v = rng.normal() * stddev;
      if (r >= first_row && r < first_row + local_rows && c >= first_column && c < first_column + width)
        data[static_cast<std::size_t>(r - first_row) * width + (c - first_column)] = static_cast<T>(v);
    }
}

// Rows [first_row, first_row + rows) of a full_rows x full_cols tensor, columns as ShardMap::columns.
ShardMap row_block(int full_rows, int full_cols, int first_row, int first_col, int local_cols) {
  ShardMap m = ShardMap::columns(full_rows, full_cols, first_col, local_cols);
  m.first_row = first_row;
  return m;
}
}  // namespace

template <class T>
Gpt<T>::Gpt(const ModelSpec& spec, const ProcessGrid& grid, GemmTuner<T>& tuner, std::uint64_t seed)
    : spec_(spec), width_(spec.hidden / grid.layout().x), grid_(grid), tuner_(tuner), runner_(grid) {
  const Layout& layout = grid.layout();
  const int stage = grid.coords().stage;
  embeds_ = stage == 0;
  heads_ = stage == layout.pipeline - 1;
  block_index_.assign(static_cast<std::size_t>(spec.layers), -1);
  std::vector<int> layers;
  if (layout.pipeline > 1) {
    for (int c = 0; c < layout.virtual_stages; ++c) {
      const BlockRange r = chunk_blocks(layout, spec.layers, virtual_stage(layout, stage, c));
      for (int l = r.first; l < r.end; ++l) layers.push_back(l);
    }
  } else {
    for (int l = 0; l < spec.layers; ++l) layers.push_back(l);
  }

  const auto h = static_cast<std::size_t>(width_);
  const int replicas = layout.y * layout.z;
  const int first = grid.coords().x * width_;
  vocab_parallel_ = layout.vocabulary_parallel();
  sequence_split_ = layout.sequence_parallel ? layout.y : 1;
  vocab_local_ = vocab_parallel_ ? spec.vocabulary / layout.y : spec.vocabulary;
  vocab_first_ = vocab_parallel_ ? grid.coords().y * vocab_local_ : 0;
  // The token table and head: replicated over Y, or split over it by rows.
  const int table_replicas = vocab_parallel_ ? layout.z : replicas;
  const ShardMap table = row_block(spec.vocabulary, spec.hidden, vocab_first_, first, width_);
  const auto table_size = static_cast<std::size_t>(vocab_local_) * h;
  // Registration order is rank_tensors' (workload/step_schedule.hpp), less what other stages hold.
  if (embeds_ || (heads_ && spec.tied_embeddings)) {
    wte_ = store_.add("wte", table_size, true, Replication::replicated, table_replicas, table);
    if (!embeds_) store_.exclude_from_norm(wte_);  // the first stage's share counts it
  }
  if (embeds_ && spec.position == Position::learned)
    wpe_ = store_.add("wpe", static_cast<std::size_t>(spec.sequence_length) * h, true, Replication::replicated,
                      replicas, ShardMap::columns(spec.sequence_length, spec.hidden, first, width_));
  blocks_.reserve(layers.size());
  for (const int l : layers) {
    block_index_[static_cast<std::size_t>(l)] = static_cast<int>(blocks_.size());
    blocks_.emplace_back(store_, l, spec, grid);
  }
  if (heads_) {
    lnf_gamma_ = store_.add("lnf.gamma", h, false, Replication::replicated, replicas,
                            ShardMap::columns(1, spec.hidden, first, width_));
    if (spec.norm == NormKind::layernorm)
      lnf_beta_ = store_.add("lnf.beta", h, false, Replication::replicated, replicas,
                             ShardMap::columns(1, spec.hidden, first, width_));
    // An untied LM head: V x h, split by hidden features over X as the tied one is.
    if (!spec.tied_embeddings) lm_head_ = store_.add("lm_head", table_size, true, Replication::replicated, table_replicas, table);
  }

  // Every tensor draws from its own stream: a stage initialises its part as the whole model would.
  if (wte_.size > 0)
    fill_normal_columns(store_.value(wte_), spec.vocabulary, spec.hidden, first, width_, seed, kTokenEmbeddingStream,
                        0.02, vocab_first_, vocab_local_);
  if (wpe_.size > 0)
    fill_normal_columns(store_.value(wpe_), spec.sequence_length, spec.hidden, first, width_, seed,
                        kPositionEmbeddingStream, 0.01);  // GPT-2 uses 0.01
  if (lm_head_.size > 0)
    fill_normal_columns(store_.value(lm_head_), spec.vocabulary, spec.hidden, first, width_, seed, kLmHeadStream, 0.02,
                        vocab_first_, vocab_local_);
  for (const auto& b : blocks_) b.init(store_, seed);
  if (lnf_gamma_.size > 0) std::fill(store_.value(lnf_gamma_), store_.value(lnf_gamma_) + h, T(1));
  if (lnf_beta_.size > 0) std::fill(store_.value(lnf_beta_), store_.value(lnf_beta_) + h, T(0));
}

template <class T>
void Gpt<T>::set_options(const StepScheduleOptions& options) {
  options_ = options;
  passes_.clear();
  states_.clear(), state_of_.clear(), free_states_.clear();
}

template <class T>
const StepSchedule& Gpt<T>::pass(int sequences, ModelPass which) {
  const Layout& layout = grid_.layout();
  if (layout.pipelined() || vocab_parallel_)
    throw std::logic_error("a pipelined or vocabulary-parallel layout runs the model through its step schedule only");
  for (const Pass& p : passes_)
    if (p.sequences == sequences && p.pass == which) return p.schedule;
  const long long global = static_cast<long long>(sequences) * layout.data * layout.z;
  passes_.push_back(Pass{sequences, which, make_model_schedule(spec_, layout, global, which, options_)});
  return passes_.back().schedule;
}

template <class T>
void Gpt<T>::set_batch(const int* tokens, const int* targets, int sequences, T scale) {
  const std::size_t m = static_cast<std::size_t>(sequences) * spec_.sequence_length;
  sequences_ = sequences;
  micro_sequences_ = sequences / grid_.layout().micro_batches;
  scale_ = scale;
  loss_sum_ = 0;
  tokens_.assign(tokens, tokens + m);
  if (targets != nullptr) targets_.assign(targets, targets + m);
  // A new step: no micro-batch is in flight.
  for (const auto& [key, index] : state_of_) free_states_.push_back(index);
  state_of_.clear();
  in_backward_.reset();
}

template <class T>
double Gpt<T>::forward(const int* tokens, const int* targets, int sequences) {
  set_batch(tokens, targets, sequences, scale_);
  runner_.run(pass(sequences, ModelPass::forward), *this);
  return loss_sum_;
}

template <class T>
const T* Gpt<T>::forward_logits(const int* tokens, int sequences) {
  set_batch(tokens, nullptr, sequences, scale_);
  runner_.run(pass(sequences, ModelPass::logits), *this);
  return states_[state_of_.at(ActionKey{-1, -1})].logits.data();
}

template <class T>
void Gpt<T>::backward(T scale) {
  scale_ = scale;
  runner_.run(pass(sequences_, ModelPass::backward), *this);
}

template <class T>
BlockRange Gpt<T>::chunk_of(const StepOp& op) const {
  const Layout& layout = grid_.layout();
  if (op.chunk < 0) return {0, spec_.layers};
  return chunk_blocks(layout, spec_.layers, virtual_stage(layout, grid_.coords().stage, op.chunk));
}

template <class T>
bool Gpt<T>::first_chunk(const StepOp& op) const {
  return op.chunk < 0 || virtual_stage(grid_.layout(), grid_.coords().stage, op.chunk) == 0;
}

template <class T>
bool Gpt<T>::last_chunk(const StepOp& op) const {
  const Layout& layout = grid_.layout();
  return op.chunk < 0 || virtual_stage(layout, grid_.coords().stage, op.chunk) == virtual_stages(layout) - 1;
}

template <class T>
const int* Gpt<T>::tokens(const StepOp& op) const {
  return tokens_.data() + static_cast<std::size_t>(std::max(op.micro_batch, 0)) * rows();
}

template <class T>
const int* Gpt<T>::targets(const StepOp& op) const {
  return targets_.data() + static_cast<std::size_t>(std::max(op.micro_batch, 0)) * rows();
}

// The state of the op's action, sized for its chunk on first use (its embedding or the receive of
// its input).
template <class T>
typename Gpt<T>::MicroBatchState& Gpt<T>::state(const StepOp& op) {
  const ActionKey key = key_of(op);
  const auto it = state_of_.find(key);
  if (it != state_of_.end()) return states_[it->second];
  std::size_t index = states_.size();
  if (free_states_.empty()) {
    states_.emplace_back();
  } else {
    index = free_states_.back();
    free_states_.pop_back();
  }
  state_of_.emplace(key, index);
  MicroBatchState& s = states_[index];
  const auto mh = static_cast<std::size_t>(shard_rows()) * width_;  // the residual stream's shard
  const BlockRange chunk = chunk_of(op);
  s.residual.resize(static_cast<std::size_t>(spec_.layers) + 1);
  for (int l = chunk.first; l <= chunk.end; ++l) s.residual[static_cast<std::size_t>(l)].resize(mh);
  if (!options_.recompute) s.activations.resize(static_cast<std::size_t>(spec_.layers));
  for (int l = chunk.first; l < chunk.end; ++l)
    block(l).prepare(micro_sequences_, options_.recompute ? recomputed_ : s.activations[static_cast<std::size_t>(l)]);
  if (options_.recompute) recomputed_out_.resize(mh);
  if (last_chunk(op)) {
    const auto m = static_cast<std::size_t>(rows()), shard = static_cast<std::size_t>(shard_rows());
    s.final_norm.resize(mh), s.final_mean.resize(shard), s.final_rstd.resize(shard);
    if (sequence_split_ > 1) s.final_gathered.resize(m * static_cast<std::size_t>(width_));
    s.logits.resize(m * static_cast<std::size_t>(vocab_local_));
    if (vocab_parallel_) s.row_max.resize(m), s.target_logit.resize(m), s.sum_exp.resize(m);
  }
  for (auto& g : residual_grad_) g.resize(mh);
  return s;
}

namespace {
// The ops of a backward pass (a recomputed forward runs inside it too).
bool backward_task(StepTask task) {
  switch (task) {
    case StepTask::cross_entropy_backward:
    case StepTask::lm_head_dx_gemm:
    case StepTask::lm_head_dw_gemm:
    case StepTask::residual_zero:
    case StepTask::norm_backward_sums:
    case StepTask::norm_backward_sum:
    case StepTask::norm_backward_dx:
    case StepTask::fc_dx_gemm:
    case StepTask::fc_dx_sum:
    case StepTask::fc_dw_gemm:
    case StepTask::fc_dw_scatter:
    case StepTask::fc_gradient_add:
    case StepTask::fc_bias_grad:
    case StepTask::attention_backward:
    case StepTask::gelu_backward:
    case StepTask::rope_backward:
    case StepTask::residual_copy:
    case StepTask::embedding_backward:
      return true;
    default:
      return false;
  }
}
}  // namespace

// A micro-batch's state is free once its backward is over: when an op of another action follows.
template <class T>
void Gpt<T>::release_finished(const StepOp& op) {
  if (op.chunk < 0) return;
  const ActionKey key = key_of(op);
  if (in_backward_ && *in_backward_ != key) {
    const auto it = state_of_.find(*in_backward_);
    if (it != state_of_.end()) {
      free_states_.push_back(it->second);
      state_of_.erase(it);
    }
    const auto g = received_gradient_.find(*in_backward_);
    if (g != received_gradient_.end()) {
      spare_gradients_.push_back(std::move(g->second));
      received_gradient_.erase(g);
    }
    in_backward_.reset();
  }
  if (op.kind == StepOpKind::compute && backward_task(op.task)) in_backward_ = key;
}

template <class T>
BlockBuffers<T> Gpt<T>::block_buffers(const StepOp& op) {
  const auto l = static_cast<std::size_t>(op.block);
  MicroBatchState& s = state(op);
  BlockBuffers<T> io;
  io.x_in = s.residual[l].data();
  io.x_out = op.recomputed ? recomputed_out_.data() : s.residual[l + 1].data();
  // The chunk's last block reads the output gradient the next stage sent (a forward op, before it
  // has come, reads none).
  if (!last_chunk(op) && op.block + 1 == chunk_of(op).end) {
    const auto received = received_gradient_.find(key_of(op));
    io.dx_out = received == received_gradient_.end() ? nullptr : received->second.data();
  } else {
    io.dx_out = residual_grad_[(l + 1) % 2].data();
  }
  io.dx_in = residual_grad_[l % 2].data();
  io.activations = options_.recompute ? &recomputed_ : &s.activations[l];
  io.scratch = &scratch_;
  return io;
}

// The final norm over the last block's output (its backward writes the residual gradient).
template <class T>
void Gpt<T>::compute_norm(const StepOp& op) {
  MicroBatchState& s = state(op);
  const int m = shard_rows(), h = width_;
  const T* x = s.residual.back().data();
  T* dx = residual_grad_[static_cast<std::size_t>(spec_.layers) % 2].data();
  if (spec_.norm == NormKind::rmsnorm) {
    rms_norm_stage(op,
                   NormStage<T>{x, store_.value(lnf_gamma_), s.final_norm.data(), s.final_rstd.data(), d_final_.data(),
                                dx, store_.grad(lnf_gamma_), m, h, spec_.hidden},
                   scratch_.norm_sums);
    return;
  }
  switch (op.task) {
    case StepTask::norm_row_sums:
      layer_norm_row_sums(x, s.final_mean.data(), m, h);
      break;
    case StepTask::norm_deviations:
      layer_norm_deviations(x, s.final_mean.data(), s.final_rstd.data(), m, h, spec_.hidden);
      break;
    case StepTask::norm_normalize:
      layer_norm_normalize(x, store_.value(lnf_gamma_), store_.value(lnf_beta_), s.final_norm.data(),
                           s.final_mean.data(), s.final_rstd.data(), m, h, spec_.hidden);
      break;
    case StepTask::norm_backward_sums:
      scratch_.norm_sums.resize(2 * static_cast<std::size_t>(m));
      layer_norm_backward_sums(d_final_.data(), x, store_.value(lnf_gamma_), s.final_mean.data(),
                               s.final_rstd.data(), scratch_.norm_sums.data(), store_.grad(lnf_gamma_),
                               store_.grad(lnf_beta_), m, h);
      break;
    case StepTask::norm_backward_dx:
      layer_norm_backward_dx(d_final_.data(), x, store_.value(lnf_gamma_), s.final_mean.data(), s.final_rstd.data(),
                             scratch_.norm_sums.data(), dx, m, h, spec_.hidden);
      break;
    default:
      throw std::logic_error("step op " + op.name + " is not a layer-norm stage");
  }
}

template <class T>
void Gpt<T>::compute(const StepOp& op) {
  release_finished(op);
  if (op.block >= 0) {
    block(op.block).compute(op, context(), block_buffers(op));
    return;
  }
  const int s = spec_.sequence_length, h = width_, v = vocab_local_;
  const int m = rows();
  const auto mh = static_cast<std::size_t>(m) * h;
  const auto shard_h = static_cast<std::size_t>(shard_rows()) * h;
  const bool sequence_parallel = sequence_split_ > 1;
  switch (op.task) {
    case StepTask::embedding_forward:
      // The positions once, by the first Y rank: the sum over Y adds the shards (with sequence
      // parallelism a reduce-scatter into the rank's rows).
      if (vocab_parallel_) {
        if (sequence_parallel) embedding_partial_.resize(mh);
        embedding_shard_forward(tokens(op), store_.value(wte_), vocab_first_, vocab_local_,
                                grid_.coords().y == 0 ? position_table() : nullptr,
                                sequence_parallel ? embedding_partial_.data() : state(op).residual[0].data(),
                                micro_sequences_, s, h);
      }
      else
        embedding_forward(tokens(op), store_.value(wte_), position_table(), state(op).residual[0].data(),
                          micro_sequences_, s, h);
      break;
    case StepTask::norm_row_sums:
    case StepTask::norm_deviations:
    case StepTask::norm_normalize:
    case StepTask::norm_backward_sums:
    case StepTask::norm_backward_dx:
      compute_norm(op);
      break;
    case StepTask::lm_head_gemm: {
      MicroBatchState& st = state(op);
      const T* x = sequence_parallel ? st.final_gathered.data() : st.final_norm.data();
      tuner_.run(Op::n, Op::t, m, v, h, T(1), x, store_.value(head()), T(0), st.logits.data());
      break;
    }
    case StepTask::cross_entropy_max: {
      MicroBatchState& st = state(op);
      cross_entropy_shard_max(st.logits.data(), m, v, st.row_max.data());
      break;
    }
    case StepTask::cross_entropy_forward: {
      MicroBatchState& st = state(op);
      if (vocab_parallel_)  // the loss needs the sums over Y: taken in backward
        cross_entropy_shard_sums(st.logits.data(), targets(op), m, v, vocab_first_, st.row_max.data(),
                                 st.target_logit.data(), st.sum_exp.data());
      else
        loss_sum_ += cross_entropy_forward(st.logits.data(), targets(op), m, v);  // over the micro-batches
      break;
    }
    case StepTask::cross_entropy_backward: {
      // The logits now hold their gradient.
      MicroBatchState& st = state(op);
      if (vocab_parallel_) {
        loss_sum_ += cross_entropy_shard_loss(targets(op), m, st.row_max.data(), st.target_logit.data(),
                                              st.sum_exp.data());
        cross_entropy_shard_backward(st.logits.data(), targets(op), m, v, vocab_first_, st.sum_exp.data(), scale_);
      } else {
        cross_entropy_backward(st.logits.data(), targets(op), m, v, scale_);
      }
      d_final_.resize(shard_h);
      if (sequence_parallel) d_final_gathered_.resize(mh);
      break;
    }
    case StepTask::lm_head_dx_gemm:
      tuner_.run(Op::n, Op::n, m, h, v, T(1), state(op).logits.data(), store_.value(head()), T(0),
                 sequence_parallel ? d_final_gathered_.data() : d_final_.data());
      break;
    case StepTask::lm_head_dw_gemm: {
      MicroBatchState& st = state(op);
      const T* x = sequence_parallel ? st.final_gathered.data() : st.final_norm.data();
      tuner_.run(Op::t, Op::n, v, h, m, T(1), st.logits.data(), x, T(1), store_.grad(head()));
      break;
    }
    case StepTask::residual_zero:
      residual_grad_[static_cast<std::size_t>(spec_.layers) % 2].assign(shard_h, T(0));
      residual_grad_[static_cast<std::size_t>(spec_.layers + 1) % 2].resize(shard_h);
      break;
    case StepTask::embedding_backward:
      if (vocab_parallel_)  // with sequence parallelism, the gradient gathered over Y
        embedding_shard_backward(tokens(op), sequence_parallel ? embedding_gradient_.data() : residual_grad_[0].data(),
                                 store_.grad(wte_), vocab_first_, vocab_local_,
                                 wpe_.size > 0 ? store_.grad(wpe_) : nullptr, micro_sequences_, s, h);
      else
        embedding_backward(tokens(op), residual_grad_[0].data(), store_.grad(wte_),
                           wpe_.size > 0 ? store_.grad(wpe_) : nullptr, micro_sequences_, s, h);
      break;
    case StepTask::embedding_gradient_add: {
      T* g = store_.grad(wte_);
      for (std::size_t i = 0; i < wte_.size; ++i) g[i] += received_embedding_gradient_[i];
      break;
    }
    default:
      throw std::logic_error("step op " + op.name + " is not the model's");
  }
}

// A stage transfer's buffer: a forward sends the chunk's output and receives the chunk's input
// into the micro-batch's state; a backward sends the gradient of the chunk's input and receives
// that of its output; the tied embedding's gradient goes whole between the first and last stage.
template <class T>
CollectiveBuffers<T> Gpt<T>::transfer_buffers(const StepOp& op) {
  const bool send = op.kind == StepOpKind::send;
  const auto mh = static_cast<std::size_t>(shard_rows()) * width_;  // the residual stream's shard
  switch (op.stream) {
    case StageStream::activations: {
      MicroBatchState& s = state(op);
      const BlockRange chunk = chunk_of(op);
      if (send) return {s.residual[static_cast<std::size_t>(chunk.end)].data(), nullptr, mh};
      return {nullptr, s.residual[static_cast<std::size_t>(chunk.first)].data(), mh};
    }
    case StageStream::gradients: {
      if (send) return {residual_grad_[static_cast<std::size_t>(chunk_of(op).first) % 2].data(), nullptr, mh};
      std::vector<T>& g = received_gradient_[key_of(op)];
      if (g.empty() && !spare_gradients_.empty()) {
        g = std::move(spare_gradients_.back());
        spare_gradients_.pop_back();
      }
      g.resize(mh);
      return {nullptr, g.data(), mh};
    }
    case StageStream::embedding_gradients:
      if (send) return {store_.grad(wte_), nullptr, wte_.size};
      received_embedding_gradient_.resize(wte_.size);
      return {nullptr, received_embedding_gradient_.data(), wte_.size};
  }
  throw std::logic_error("step op " + op.name + " is not a stage transfer");
}

template <class T>
CollectiveBuffers<T> Gpt<T>::buffers(const StepOp& op) {
  release_finished(op);
  if (op.kind == StepOpKind::send || op.kind == StepOpKind::receive) return transfer_buffers(op);
  if (op.block >= 0) return block(op.block).buffers(op, store_, block_buffers(op));
  const auto m = static_cast<std::size_t>(shard_rows());  // the final norm's rows
  const auto shard_h = m * static_cast<std::size_t>(width_);
  const bool sequence_parallel = sequence_split_ > 1;
  switch (op.task) {
    case StepTask::norm_mean_sum:
      return {nullptr, state(op).final_mean.data(), m};
    case StepTask::norm_variance_sum:
      return {nullptr, state(op).final_rstd.data(), m};
    case StepTask::norm_backward_sum:
      return {nullptr, scratch_.norm_sums.data(), scratch_.norm_sums.size()};
    case StepTask::lm_head_sum: {
      std::vector<T>& logits = state(op).logits;
      return {nullptr, logits.data(), logits.size()};
    }
    // Vocabulary-parallel: the embedding's shards, the loss's row sums, the head's dX over Y.
    // With sequence parallelism: a reduce-scatter of the embedding into the rank's rows, an
    // all-gather of the final norm's output (forward) and of the residual gradient (the
    // embedding's backward), a reduce-scatter of the head's dX.
    case StepTask::embedding_forward:
      if (sequence_parallel) return {embedding_partial_.data(), state(op).residual[0].data(), shard_h};
      return {nullptr, state(op).residual[0].data(), shard_h};
    case StepTask::lm_head_gemm: {
      MicroBatchState& st = state(op);
      return {st.final_norm.data(), st.final_gathered.data(), shard_h};
    }
    case StepTask::embedding_backward:
      embedding_gradient_.resize(shard_h * static_cast<std::size_t>(sequence_split_));
      return {residual_grad_[0].data(), embedding_gradient_.data(), shard_h};
    case StepTask::cross_entropy_max:
      return {nullptr, state(op).row_max.data(), static_cast<std::size_t>(rows()), nullptr, true};
    case StepTask::cross_entropy_forward: {
      MicroBatchState& st = state(op);
      return {nullptr, op.layer == 1 ? st.target_logit.data() : st.sum_exp.data(), static_cast<std::size_t>(rows())};
    }
    case StepTask::lm_head_dx_gemm:
      if (sequence_parallel) return {d_final_gathered_.data(), d_final_.data(), shard_h};
      return {nullptr, d_final_.data(), shard_h};
    default:
      throw std::logic_error("step op " + op.name + " is not a collective of the model");
  }
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace ws
