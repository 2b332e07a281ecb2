#include "engine/model/block.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/kernels/gelu.hpp"
#include "engine/kernels/layer_norm.hpp"

namespace ws {

namespace {
std::string prefix(int index) { return "block" + std::to_string(index) + "."; }

int replicas(const ProcessGrid& grid) { return grid.layout().y * grid.layout().z; }

// Layer-norm parameters follow the residual stream: this rank's X slice of the hidden features.
ShardMap feature_slice(const ModelSpec& spec, const ProcessGrid& grid) {
  const int width = spec.hidden / grid.layout().x;
  return ShardMap::columns(1, spec.hidden, grid.coords().x * width, width);
}
}  // namespace

template <class T>
Block<T>::Block(ParameterStore<T>& store, int index, const ModelSpec& spec, const ProcessGrid& grid)
    : index_(index),
      layers_(spec.layers),
      hidden_(spec.hidden),
      seq_(spec.sequence_length),
      width_(spec.hidden / grid.layout().x),
      ln1_gamma_(store.add(prefix(index) + "ln1.gamma", width_, false, Replication::replicated, replicas(grid),
                                   feature_slice(spec, grid))),
      ln1_beta_(store.add(prefix(index) + "ln1.beta", width_, false, Replication::replicated, replicas(grid),
                                   feature_slice(spec, grid))),
      ln2_gamma_(store.add(prefix(index) + "ln2.gamma", width_, false, Replication::replicated, replicas(grid),
                                   feature_slice(spec, grid))),
      ln2_beta_(store.add(prefix(index) + "ln2.beta", width_, false, Replication::replicated, replicas(grid),
                                   feature_slice(spec, grid))),
      qkv_(store, prefix(index) + "qkv", spec.hidden, 3 * spec.hidden, FcOrientation::normal, grid, 3),
      proj_(store, prefix(index) + "proj", spec.hidden, spec.hidden, FcOrientation::transposed, grid),
      up_(store, prefix(index) + "up", spec.hidden, 4 * spec.hidden, FcOrientation::normal, grid),
      down_(store, prefix(index) + "down", 4 * spec.hidden, spec.hidden, FcOrientation::transposed, grid) {
  range_ = Tensor{ln1_gamma_.offset, store.size() - ln1_gamma_.offset};
  // Heads follow the QKV output features over Y; QKV's three column groups keep each shard's
  // Q, K and V columns for the same heads.
  const int head_dim = spec.hidden / spec.heads;
  attention_.heads = qkv_.out_local() / (3 * head_dim);
  attention_.head_dim = head_dim;
  attention_.seq = seq_;
}

template <class T>
void Block<T>::init(ParameterStore<T>& store, std::uint64_t seed) const {
  for (Tensor t : {ln1_gamma_, ln2_gamma_}) std::fill(store.value(t), store.value(t) + t.size, T(1));
  for (Tensor t : {ln1_beta_, ln2_beta_}) std::fill(store.value(t), store.value(t) + t.size, T(0));
  // GPT-2: N(0, 0.02), and 0.02 / sqrt(2 L) for the projections that feed the residual stream.
  const double residual_stddev = 0.02 / std::sqrt(2.0 * layers_);
  const auto stream = static_cast<std::uint64_t>(index_) * 4;
  qkv_.init(store, seed, stream + 0, 0.02);
  proj_.init(store, seed, stream + 1, residual_stddev);
  up_.init(store, seed, stream + 2, 0.02);
  down_.init(store, seed, stream + 3, residual_stddev);
}

template <class T>
void Block<T>::forward(const LayerContext<T>& ctx, const T* x_in, T* x_out, int sequences, BlockActivations<T>& a) {
  const int m = sequences * seq_, w = width_;
  const auto rows = static_cast<std::size_t>(m);
  const auto mw = rows * w;
  attention_.sequences = sequences;
  a.ln1.resize(mw), a.mean1.resize(rows), a.rstd1.resize(rows), a.qkv_out.resize(rows * qkv_.out_local());
  a.probs.resize(attention_.probs_size()), a.att.resize(rows * proj_.in_local()), a.mid.resize(mw);
  a.ln2.resize(mw), a.mean2.resize(rows), a.rstd2.resize(rows), a.up_out.resize(rows * up_.out_local());
  a.gelu_out.resize(a.up_out.size()), a.gelu_tanh.resize(a.up_out.size());
  auto& s = ctx.store;
  const ShardSum<T> x_sum = sum_over_x<T>(ctx.grid);
  Timeline& timeline = ctx.grid.timeline();
  const char* phase = ctx.phase;

  {
    const ComputeSpan span(timeline, phase, index_, "ln1");
    layer_norm_forward(x_in, s.value(ln1_gamma_), s.value(ln1_beta_), a.ln1.data(), a.mean1.data(), a.rstd1.data(), m,
                       w, hidden_, x_sum);
  }
  qkv_.forward(ctx, a.ln1.data(), a.qkv_out.data(), m);
  {
    const ComputeSpan span(timeline, phase, index_, "attention");
    attention_forward(attention_, a.qkv_out.data(), a.att.data(), a.probs.data());
  }
  proj_.forward(ctx, a.att.data(), a.mid.data(), m);
  {
    const ComputeSpan span(timeline, phase, index_, "ln2");
    for (std::size_t i = 0; i < mw; ++i) a.mid[i] += x_in[i];
    layer_norm_forward(a.mid.data(), s.value(ln2_gamma_), s.value(ln2_beta_), a.ln2.data(), a.mean2.data(),
                       a.rstd2.data(), m, w, hidden_, x_sum);
  }
  up_.forward(ctx, a.ln2.data(), a.up_out.data(), m);
  {
    const ComputeSpan span(timeline, phase, index_, "gelu");
    gelu_forward(a.up_out.data(), a.gelu_out.data(), a.gelu_tanh.data(), a.up_out.size());
  }
  down_.forward(ctx, a.gelu_out.data(), x_out, m);
  const ComputeSpan span(timeline, phase, index_, "residual");
  for (std::size_t i = 0; i < mw; ++i) x_out[i] += a.mid[i];
}

template <class T>
void Block<T>::backward(const LayerContext<T>& ctx, const T* x_in, const T* dx_out, T* dx_in,
                        const BlockActivations<T>& a, BlockScratch<T>& scratch) {
  const int m = attention_.sequences * seq_, w = width_;
  const auto rows = static_cast<std::size_t>(m);
  auto& s = ctx.store;
  auto& d = scratch;
  const ShardSum<T> x_sum = sum_over_x<T>(ctx.grid);
  Timeline& timeline = ctx.grid.timeline();
  const char* phase = ctx.phase;
  d.d_mid.assign(dx_out, dx_out + rows * w);  // the residual passes dx_out straight through
  d.d_norm.resize(rows * w), d.d_att.resize(a.att.size()), d.d_mlp.resize(a.up_out.size());
  d.d_qkv.resize(a.qkv_out.size()), d.d_probs.resize(static_cast<std::size_t>(seq_) * seq_);

  down_.backward(ctx, a.gelu_out.data(), dx_out, d.d_mlp.data(), m);
  {
    const ComputeSpan span(timeline, phase, index_, "gelu");
    gelu_backward(a.up_out.data(), a.gelu_tanh.data(), d.d_mlp.data(), d.d_mlp.data(), d.d_mlp.size());
  }
  up_.backward(ctx, a.ln2.data(), d.d_mlp.data(), d.d_norm.data(), m);
  {
    const ComputeSpan span(timeline, phase, index_, "ln2");
    layer_norm_backward(d.d_norm.data(), a.mid.data(), s.value(ln2_gamma_), a.mean2.data(), a.rstd2.data(),
                        d.d_mid.data(), s.grad(ln2_gamma_), s.grad(ln2_beta_), m, w, hidden_, x_sum);
  }
  proj_.backward(ctx, a.att.data(), d.d_mid.data(), d.d_att.data(), m);
  {
    const ComputeSpan span(timeline, phase, index_, "attention");
    attention_backward(attention_, a.qkv_out.data(), a.probs.data(), d.d_att.data(), d.d_qkv.data(),
                       d.d_probs.data());
  }
  qkv_.backward(ctx, a.ln1.data(), d.d_qkv.data(), d.d_norm.data(), m);
  const ComputeSpan span(timeline, phase, index_, "ln1");
  std::copy(d.d_mid.begin(), d.d_mid.end(), dx_in);
  layer_norm_backward(d.d_norm.data(), x_in, s.value(ln1_gamma_), a.mean1.data(), a.rstd1.data(), dx_in,
                      s.grad(ln1_gamma_), s.grad(ln1_beta_), m, w, hidden_, x_sum);
}

template <class T>
void Block<T>::start_gathers(const LayerContext<T>& ctx) {
  for (FcLayer<T>* layer : {&qkv_, &proj_, &up_, &down_}) layer->start_gather(ctx);
}

template <class T>
void Block<T>::finish_gradients() {
  for (FcLayer<T>* layer : {&qkv_, &proj_, &up_, &down_}) layer->finish_gradient();
}

template class Block<float>;
template class Block<double>;

}  // namespace ws
