#include "engine/model/gpt.hpp"

#include <algorithm>

#include "engine/kernels/cross_entropy.hpp"
#include "engine/kernels/embedding.hpp"
#include "engine/kernels/layer_norm.hpp"
#include "engine/model/random.hpp"

namespace ws {

namespace {
// Initialisation streams: blocks use 4 per block from 0; the embeddings use these.
constexpr std::uint64_t kTokenEmbeddingStream = 1ULL << 32;
constexpr std::uint64_t kPositionEmbeddingStream = (1ULL << 32) + 1;

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
    : spec_(spec), width_(spec.hidden / grid.layout().x), grid_(grid), tuner_(tuner) {
  const auto h = static_cast<std::size_t>(width_);
  const int replicas = grid.layout().y * grid.layout().z;
  const int first = grid.coords().x * width_;
  wte_ = store_.add("wte", static_cast<std::size_t>(spec.vocabulary) * h, true, Replication::replicated, replicas,
                    ShardMap::columns(spec.vocabulary, spec.hidden, first, width_));
  wpe_ = store_.add("wpe", static_cast<std::size_t>(spec.sequence_length) * h, true, Replication::replicated,
                    replicas, ShardMap::columns(spec.sequence_length, spec.hidden, first, width_));
  blocks_.reserve(spec.layers);
  for (int l = 0; l < spec.layers; ++l) blocks_.emplace_back(store_, l, spec, grid);
  lnf_gamma_ = store_.add("lnf.gamma", h, false, Replication::replicated, replicas,
                          ShardMap::columns(1, spec.hidden, first, width_));
  lnf_beta_ = store_.add("lnf.beta", h, false, Replication::replicated, replicas,
                         ShardMap::columns(1, spec.hidden, first, width_));

  fill_normal_columns(store_.value(wte_), spec.vocabulary, spec.hidden, first, width_, seed, kTokenEmbeddingStream,
                      0.02);
  fill_normal_columns(store_.value(wpe_), spec.sequence_length, spec.hidden, first, width_, seed,
                      kPositionEmbeddingStream, 0.01);  // GPT-2 uses 0.01
  for (const auto& b : blocks_) b.init(store_, seed);
  std::fill(store_.value(lnf_gamma_), store_.value(lnf_gamma_) + h, T(1));
  std::fill(store_.value(lnf_beta_), store_.value(lnf_beta_) + h, T(0));
  residual_.resize(spec.layers + 1);
  activations_.resize(blocks_.size());
}

template <class T>
void Gpt<T>::set_recompute(bool recompute) {
  recompute_ = recompute;
  activations_.clear();
  activations_.resize(recompute || blocks_.empty() ? 1 : blocks_.size());
}

template <class T>
double Gpt<T>::forward(const int* tokens, const int* targets, int sequences) {
  const int m = sequences * spec_.sequence_length;
  forward_logits(tokens, sequences);
  targets_.assign(targets, targets + m);
  const ComputeSpan span(grid_.timeline(), "fwd", -1, "cross_entropy");
  return cross_entropy_forward(logits_.data(), targets, m, spec_.vocabulary);
}

template <class T>
const T* Gpt<T>::forward_logits(const int* tokens, int sequences) {
  const int s = spec_.sequence_length, h = width_, v = spec_.vocabulary;
  const int m = sequences * s;
  const auto mh = static_cast<std::size_t>(m) * h;
  sequences_ = sequences;
  tokens_.assign(tokens, tokens + m);
  for (auto& r : residual_) r.resize(mh);
  const auto ctx = context("fwd");
  Timeline& timeline = grid_.timeline();

  {
    const ComputeSpan span(timeline, "fwd", -1, "embedding");
    embedding_forward(tokens, store_.value(wte_), store_.value(wpe_), residual_[0].data(), sequences, s, h);
  }
  // OAG: each block's weight gathers are in flight while the block before it computes.
  if (overlap_.all_gather && !blocks_.empty()) blocks_[0].start_gathers(ctx);
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    if (overlap_.all_gather && l + 1 < blocks_.size()) blocks_[l + 1].start_gathers(ctx);
    blocks_[l].forward(ctx, residual_[l].data(), residual_[l + 1].data(), sequences,
                       activations_[recompute_ ? 0 : l]);
  }
  final_norm_.resize(mh), final_mean_.resize(m), final_rstd_.resize(m);
  {
    const ComputeSpan span(timeline, "fwd", -1, "lnf");
    layer_norm_forward(residual_.back().data(), store_.value(lnf_gamma_), store_.value(lnf_beta_), final_norm_.data(),
                       final_mean_.data(), final_rstd_.data(), m, h, spec_.hidden, sum_over_x<T>(grid_));
  }
  logits_.resize(static_cast<std::size_t>(m) * v);
  {
    const ComputeSpan span(timeline, "fwd", -1, "lm_head.gemm");
    tuner_.run(Op::n, Op::t, m, v, h, T(1), final_norm_.data(), store_.value(wte_), T(0), logits_.data());
  }
  grid_.group(CommGroup::x).all_reduce_sum(logits_.data(), logits_.size());  // partial over features
  return logits_.data();
}

template <class T>
void Gpt<T>::backward(T scale, const GradientsReady& ready) {
  const int s = spec_.sequence_length, h = width_, v = spec_.vocabulary;
  const int m = sequences_ * s;
  const auto mh = static_cast<std::size_t>(m) * h;
  const auto ctx = context("bwd");
  const auto recompute_ctx = context("recompute");
  Timeline& timeline = grid_.timeline();

  {
    const ComputeSpan span(timeline, "bwd", -1, "cross_entropy");
    cross_entropy_backward(logits_.data(), targets_.data(), m, v, scale);  // logits_ now holds dlogits
  }
  d_final_.resize(mh);
  {
    const ComputeSpan span(timeline, "bwd", -1, "lm_head.dx_gemm");
    tuner_.run(Op::n, Op::n, m, h, v, T(1), logits_.data(), store_.value(wte_), T(0), d_final_.data());
  }
  {
    const ComputeSpan span(timeline, "bwd", -1, "lm_head.dw_gemm");
    tuner_.run(Op::t, Op::n, v, h, m, T(1), logits_.data(), final_norm_.data(), T(1), store_.grad(wte_));
  }
  d_residual_.assign(mh, T(0));
  {
    const ComputeSpan span(timeline, "bwd", -1, "lnf");
    layer_norm_backward(d_final_.data(), residual_.back().data(), store_.value(lnf_gamma_), final_mean_.data(),
                        final_rstd_.data(), d_residual_.data(), store_.grad(lnf_gamma_), store_.grad(lnf_beta_), m, h,
                        spec_.hidden, sum_over_x<T>(grid_));
  }
  d_residual_next_.resize(mh);
  for (std::size_t l = blocks_.size(); l-- > 0;) {
    if (recompute_) {
      recomputed_out_.resize(mh);
      blocks_[l].forward(recompute_ctx, residual_[l].data(), recomputed_out_.data(), sequences_, activations_[0]);
    }
    blocks_[l].backward(ctx, residual_[l].data(), d_residual_.data(), d_residual_next_.data(),
                        activations_[recompute_ ? 0 : l], scratch_);
    std::swap(d_residual_, d_residual_next_);
    // ORS: the block after this one had its reduce-scatters in flight during this backward.
    if (l + 1 < blocks_.size()) {
      blocks_[l + 1].finish_gradients();
      if (ready) ready(blocks_[l + 1].parameter_range());
    }
  }
  {
    const ComputeSpan span(timeline, "bwd", -1, "embedding");
    embedding_backward(tokens_.data(), d_residual_.data(), store_.grad(wte_), store_.grad(wpe_), sequences_, s, h);
  }
  if (!blocks_.empty()) {
    blocks_[0].finish_gradients();
    if (ready) ready(blocks_[0].parameter_range());
  }
  if (ready) {
    // Registration order: wte, wpe, blocks, final norm.
    ready(Tensor{wte_.offset, wte_.size + wpe_.size});
    ready(Tensor{lnf_gamma_.offset, lnf_gamma_.size + lnf_beta_.size});
  }
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace ws
