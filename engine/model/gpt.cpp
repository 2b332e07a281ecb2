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
// from `first_column`.
template <class T>
void fill_normal_columns(T* data, int rows, int full_width, int first_column, int width, std::uint64_t seed,
                         std::uint64_t stream, double stddev) {
  SplitMix64 rng(seed, stream);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < full_width; ++c) {
      const double v = rng.normal() * stddev;
      if (c >= first_column && c < first_column + width)
        data[static_cast<std::size_t>(r) * width + (c - first_column)] = static_cast<T>(v);
    }
}
}  // namespace

template <class T>
Gpt<T>::Gpt(const ModelSpec& spec, const ProcessGrid& grid, GemmTuner<T>& tuner, std::uint64_t seed)
    : spec_(spec), width_(spec.hidden / grid.layout().x), grid_(grid), tuner_(tuner), runner_(grid) {
  const auto h = static_cast<std::size_t>(width_);
  const int replicas = grid.layout().y * grid.layout().z;
  const int first = grid.coords().x * width_;
  wte_ = store_.add("wte", static_cast<std::size_t>(spec.vocabulary) * h, true, Replication::replicated, replicas,
                    ShardMap::columns(spec.vocabulary, spec.hidden, first, width_));
  if (spec.position == Position::learned)
    wpe_ = store_.add("wpe", static_cast<std::size_t>(spec.sequence_length) * h, true, Replication::replicated,
                      replicas, ShardMap::columns(spec.sequence_length, spec.hidden, first, width_));
  blocks_.reserve(spec.layers);
  for (int l = 0; l < spec.layers; ++l) blocks_.emplace_back(store_, l, spec, grid);
  lnf_gamma_ = store_.add("lnf.gamma", h, false, Replication::replicated, replicas,
                          ShardMap::columns(1, spec.hidden, first, width_));
  if (spec.norm == NormKind::layernorm)
    lnf_beta_ = store_.add("lnf.beta", h, false, Replication::replicated, replicas,
                           ShardMap::columns(1, spec.hidden, first, width_));
  // An untied LM head: V x h, split by hidden features over X as the tied one is.
  if (!spec.tied_embeddings)
    lm_head_ = store_.add("lm_head", static_cast<std::size_t>(spec.vocabulary) * h, true, Replication::replicated,
                          replicas, ShardMap::columns(spec.vocabulary, spec.hidden, first, width_));

  fill_normal_columns(store_.value(wte_), spec.vocabulary, spec.hidden, first, width_, seed, kTokenEmbeddingStream,
                      0.02);
  if (wpe_.size > 0)
    fill_normal_columns(store_.value(wpe_), spec.sequence_length, spec.hidden, first, width_, seed,
                        kPositionEmbeddingStream, 0.01);  // GPT-2 uses 0.01
  if (lm_head_.size > 0)
    fill_normal_columns(store_.value(lm_head_), spec.vocabulary, spec.hidden, first, width_, seed, kLmHeadStream, 0.02);
  for (const auto& b : blocks_) b.init(store_, seed);
  std::fill(store_.value(lnf_gamma_), store_.value(lnf_gamma_) + h, T(1));
  if (lnf_beta_.size > 0) std::fill(store_.value(lnf_beta_), store_.value(lnf_beta_) + h, T(0));
  residual_.resize(spec.layers + 1);
  activations_.resize(blocks_.size());
}

template <class T>
void Gpt<T>::set_options(const StepScheduleOptions& options) {
  options_ = options;
  passes_.clear();
  activations_.clear();
  activations_.resize(options.recompute || blocks_.empty() ? 1 : blocks_.size());
}

template <class T>
const StepSchedule& Gpt<T>::pass(int sequences, ModelPass which) {
  for (const Pass& p : passes_)
    if (p.sequences == sequences && p.pass == which) return p.schedule;
  const Layout& layout = grid_.layout();
  const long long global = static_cast<long long>(sequences) * layout.data * layout.z;
  passes_.push_back(Pass{sequences, which, make_model_schedule(spec_, layout, global, which, options_)});
  return passes_.back().schedule;
}

template <class T>
void Gpt<T>::set_batch(const int* tokens, const int* targets, int sequences, T scale) {
  const std::size_t m = static_cast<std::size_t>(sequences) * spec_.sequence_length;
  sequences_ = sequences;
  scale_ = scale;
  tokens_.assign(tokens, tokens + m);
  if (targets != nullptr) targets_.assign(targets, targets + m);
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
  return logits_.data();
}

template <class T>
void Gpt<T>::backward(T scale) {
  scale_ = scale;
  runner_.run(pass(sequences_, ModelPass::backward), *this);
}

// The forward's buffers for the batch's size (the first op of a forward pass).
template <class T>
void Gpt<T>::prepare_forward() {
  const int m = sequences_ * spec_.sequence_length;
  const auto mh = static_cast<std::size_t>(m) * width_;
  for (auto& r : residual_) r.resize(mh);
  for (std::size_t l = 0; l < blocks_.size(); ++l)
    blocks_[l].prepare(sequences_, activations_[options_.recompute ? 0 : l]);
  final_norm_.resize(mh), final_mean_.resize(m), final_rstd_.resize(m);
  logits_.resize(static_cast<std::size_t>(m) * spec_.vocabulary);
}

template <class T>
BlockBuffers<T> Gpt<T>::block_buffers(const StepOp& op) {
  const auto l = static_cast<std::size_t>(op.block);
  BlockBuffers<T> io;
  io.x_in = residual_[l].data();
  io.x_out = op.recomputed ? recomputed_out_.data() : residual_[l + 1].data();
  io.dx_out = residual_grad_[(l + 1) % 2].data();
  io.dx_in = residual_grad_[l % 2].data();
  io.activations = &activations_[options_.recompute ? 0 : l];
  io.scratch = &scratch_;
  return io;
}

// The final norm over the last block's output (its backward writes the residual gradient).
template <class T>
void Gpt<T>::compute_norm(const StepOp& op) {
  const int m = sequences_ * spec_.sequence_length, h = width_;
  const T* x = residual_.back().data();
  if (spec_.norm == NormKind::rmsnorm) {
    rms_norm_stage(op,
                   NormStage<T>{x, store_.value(lnf_gamma_), final_norm_.data(), final_rstd_.data(), d_final_.data(),
                                residual_grad_[blocks_.size() % 2].data(), store_.grad(lnf_gamma_), m, h,
                                spec_.hidden},
                   scratch_.norm_sums);
    return;
  }
  switch (op.task) {
    case StepTask::norm_row_sums:
      layer_norm_row_sums(x, final_mean_.data(), m, h);
      break;
    case StepTask::norm_deviations:
      layer_norm_deviations(x, final_mean_.data(), final_rstd_.data(), m, h, spec_.hidden);
      break;
    case StepTask::norm_normalize:
      layer_norm_normalize(x, store_.value(lnf_gamma_), store_.value(lnf_beta_), final_norm_.data(),
                           final_mean_.data(), final_rstd_.data(), m, h, spec_.hidden);
      break;
    case StepTask::norm_backward_sums:
      scratch_.norm_sums.resize(2 * static_cast<std::size_t>(m));
      layer_norm_backward_sums(d_final_.data(), x, store_.value(lnf_gamma_), final_mean_.data(), final_rstd_.data(),
                               scratch_.norm_sums.data(), store_.grad(lnf_gamma_), store_.grad(lnf_beta_), m, h);
      break;
    case StepTask::norm_backward_dx:
      layer_norm_backward_dx(d_final_.data(), x, store_.value(lnf_gamma_), final_mean_.data(), final_rstd_.data(),
                             scratch_.norm_sums.data(), residual_grad_[blocks_.size() % 2].data(), m, h,
                             spec_.hidden);
      break;
    default:
      throw std::logic_error("step op " + op.name + " is not a layer-norm stage");
  }
}

template <class T>
void Gpt<T>::compute(const StepOp& op) {
  if (op.block >= 0) {
    blocks_[static_cast<std::size_t>(op.block)].compute(op, context(), block_buffers(op));
    return;
  }
  const int s = spec_.sequence_length, h = width_, v = spec_.vocabulary;
  const int m = sequences_ * s;
  const auto mh = static_cast<std::size_t>(m) * h;
  switch (op.task) {
    case StepTask::embedding_forward:
      prepare_forward();
      embedding_forward(tokens_.data(), store_.value(wte_), position_table(), residual_[0].data(), sequences_, s, h);
      break;
    case StepTask::norm_row_sums:
    case StepTask::norm_deviations:
    case StepTask::norm_normalize:
    case StepTask::norm_backward_sums:
    case StepTask::norm_backward_dx:
      compute_norm(op);
      break;
    case StepTask::lm_head_gemm:
      tuner_.run(Op::n, Op::t, m, v, h, T(1), final_norm_.data(), store_.value(head()), T(0), logits_.data());
      break;
    case StepTask::cross_entropy_forward:
      loss_sum_ = cross_entropy_forward(logits_.data(), targets_.data(), m, v);
      break;
    case StepTask::cross_entropy_backward:
      cross_entropy_backward(logits_.data(), targets_.data(), m, v, scale_);  // logits_ now holds dlogits
      d_final_.resize(mh);
      if (options_.recompute) recomputed_out_.resize(mh);
      break;
    case StepTask::lm_head_dx_gemm:
      tuner_.run(Op::n, Op::n, m, h, v, T(1), logits_.data(), store_.value(head()), T(0), d_final_.data());
      break;
    case StepTask::lm_head_dw_gemm:
      tuner_.run(Op::t, Op::n, v, h, m, T(1), logits_.data(), final_norm_.data(), T(1), store_.grad(head()));
      break;
    case StepTask::residual_zero:
      residual_grad_[blocks_.size() % 2].assign(mh, T(0));
      residual_grad_[(blocks_.size() + 1) % 2].resize(mh);
      break;
    case StepTask::embedding_backward:
      embedding_backward(tokens_.data(), residual_grad_[0].data(), store_.grad(wte_),
                         wpe_.size > 0 ? store_.grad(wpe_) : nullptr, sequences_, s, h);
      break;
    default:
      throw std::logic_error("step op " + op.name + " is not the model's");
  }
}

template <class T>
CollectiveBuffers<T> Gpt<T>::buffers(const StepOp& op) {
  if (op.block >= 0) return blocks_[static_cast<std::size_t>(op.block)].buffers(op, store_, block_buffers(op));
  const auto m = static_cast<std::size_t>(sequences_) * spec_.sequence_length;
  switch (op.task) {
    case StepTask::norm_mean_sum:
      return {nullptr, final_mean_.data(), m};
    case StepTask::norm_variance_sum:
      return {nullptr, final_rstd_.data(), m};
    case StepTask::norm_backward_sum:
      return {nullptr, scratch_.norm_sums.data(), scratch_.norm_sums.size()};
    case StepTask::lm_head_sum:
      return {nullptr, logits_.data(), logits_.size()};
    default:
      throw std::logic_error("step op " + op.name + " is not a collective of the model");
  }
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace ws
