#include "engine/model/block.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/kernels/gelu.hpp"
#include "engine/kernels/layer_norm.hpp"
#include "engine/kernels/rope.hpp"
#include "engine/kernels/swiglu.hpp"
#include "engine/model/rms_norm_stage.hpp"

namespace ws {

namespace {
std::string prefix(int index) { return "block" + std::to_string(index) + "."; }

int replicas(const ProcessGrid& grid) { return grid.layout().y * grid.layout().z; }

// Layer-norm parameters follow the residual stream: this rank's X slice of the hidden features.
ShardMap feature_slice(const ModelSpec& spec, const ProcessGrid& grid) {
  const int width = spec.hidden / grid.layout().x;
  return ShardMap::columns(1, spec.hidden, grid.coords().x * width, width);
}

// A LayerNorm's beta; RMSNorm has none (an empty tensor, never registered).
template <class T>
Tensor norm_beta(ParameterStore<T>& store, const std::string& name, const ModelSpec& spec, const ProcessGrid& grid) {
  if (spec.norm != NormKind::layernorm) return Tensor{};
  return store.add(name, static_cast<std::size_t>(spec.hidden / grid.layout().x), false, Replication::replicated,
                   replicas(grid), feature_slice(spec, grid));
}
}  // namespace

template <class T>
Block<T>::Block(ParameterStore<T>& store, int index, const ModelSpec& spec, const ProcessGrid& grid)
    : index_(index),
      layers_(spec.layers),
      hidden_(spec.hidden),
      seq_(spec.sequence_length),
      norm_kind_(spec.norm),
      activation_(spec.activation),
      position_(spec.position),
      rope_base_(spec.rope_base),
      width_(spec.hidden / grid.layout().x),
      sequence_split_(grid.layout().sequence_parallel ? grid.layout().y : 1),
      ln1_gamma_(store.add(prefix(index) + "ln1.gamma", width_, false, Replication::replicated, replicas(grid),
                           feature_slice(spec, grid))),
      ln1_beta_(norm_beta(store, prefix(index) + "ln1.beta", spec, grid)),
      ln2_gamma_(store.add(prefix(index) + "ln2.gamma", width_, false, Replication::replicated, replicas(grid),
                           feature_slice(spec, grid))),
      ln2_beta_(norm_beta(store, prefix(index) + "ln2.beta", spec, grid)),
      // GPT: [Q | K | V] as three column groups, so a Y shard holds the Q, K and V of the same heads.
      // Llama: whole key/value groups [queries | key | value] side by side, cut contiguously.
      qkv_(store, prefix(index) + "qkv", spec.hidden, static_cast<int>(spec.qkv_features()), FcOrientation::normal,
           grid, spec.gpt_style() ? 3 : 1, spec.biases),
      proj_(store, prefix(index) + "proj", spec.hidden, spec.hidden, FcOrientation::transposed, grid, 1, spec.biases),
      // SwiGLU's gate and up as two column groups: a Y shard holds both for the same features.
      up_(store, prefix(index) + "up", spec.hidden, static_cast<int>(spec.up_features()), FcOrientation::normal, grid,
          spec.activation == Activation::swiglu ? 2 : 1, spec.biases),
      down_(store, prefix(index) + "down", static_cast<int>(spec.ffn()), spec.hidden, FcOrientation::transposed, grid,
            1, spec.biases) {
  range_ = Tensor{ln1_gamma_.offset, store.size() - ln1_gamma_.offset};
  const int head_dim = static_cast<int>(spec.head_dim());
  attention_.head_dim = head_dim;
  attention_.seq = seq_;
  if (spec.gpt_style()) {
    attention_.heads = attention_.kv_heads = qkv_.out_local() / (3 * head_dim);
  } else {
    const int queries = spec.heads / spec.kv_head_count(), group = (queries + 2) * head_dim;
    attention_.grouped = true;
    attention_.kv_heads = qkv_.out_local() / group;
    attention_.heads = attention_.kv_heads * queries;
    for (int g = 0; g < attention_.kv_heads; ++g)
      for (int q = 0; q <= queries; ++q) rope_columns_.push_back(g * group + q * head_dim);  // queries, then the key
  }
}

template <class T>
void Block<T>::rope(T* qkv, bool inverse) const {
  rope_rotate(qkv, attention_.sequences, seq_, attention_.qkv_stride(), rope_columns_, attention_.head_dim, rope_base_,
              inverse);
}

template <class T>
void Block<T>::init(ParameterStore<T>& store, std::uint64_t seed) const {
  for (Tensor t : {ln1_gamma_, ln2_gamma_}) std::fill(store.value(t), store.value(t) + t.size, T(1));
  for (Tensor t : {ln1_beta_, ln2_beta_})
    if (t.size > 0) std::fill(store.value(t), store.value(t) + t.size, T(0));
  // GPT-2: N(0, 0.02), and 0.02 / sqrt(2 L) for the projections that feed the residual stream.
  const double residual_stddev = 0.02 / std::sqrt(2.0 * layers_);
  const auto stream = static_cast<std::uint64_t>(index_) * 4;
  qkv_.init(store, seed, stream + 0, 0.02);
  proj_.init(store, seed, stream + 1, residual_stddev);
  up_.init(store, seed, stream + 2, 0.02);
  down_.init(store, seed, stream + 3, residual_stddev);
}

template <class T>
void Block<T>::prepare(int sequences, BlockActivations<T>& a) {
  attention_.sequences = sequences;
  const auto rows = static_cast<std::size_t>(sequences) * seq_;
  const auto shard = rows / static_cast<std::size_t>(sequence_split_);  // the norms' rows
  const auto sw = shard * width_;
  a.ln1.resize(sw), a.mean1.resize(shard), a.rstd1.resize(shard), a.qkv_out.resize(rows * qkv_.out_local());
  a.probs.resize(attention_.probs_size()), a.att.resize(rows * proj_.in_local()), a.mid.resize(sw);
  a.ln2.resize(sw), a.mean2.resize(shard), a.rstd2.resize(shard), a.up_out.resize(rows * up_.out_local());
  a.gelu_out.resize(rows * down_.in_local());
  a.gelu_tanh.resize(activation_ == Activation::gelu ? a.up_out.size() : 0);
}

template <class T>
typename Block<T>::NormOperands Block<T>::norm(int layer, const BlockBuffers<T>& io) const {
  BlockActivations<T>& a = *io.activations;
  BlockScratch<T>& d = *io.scratch;
  if (layer == 0)
    return {io.x_in, a.ln1.data(), a.mean1.data(), a.rstd1.data(), ln1_gamma_, ln1_beta_, d.d_norm.data(), io.dx_in};
  return {a.mid.data(), a.ln2.data(), a.mean2.data(), a.rstd2.data(), ln2_gamma_, ln2_beta_, d.d_norm.data(),
          d.d_mid.data()};
}

template <class T>
typename Block<T>::FcOperands Block<T>::fc(int layer, const BlockBuffers<T>& io) {
  BlockActivations<T>& a = *io.activations;
  BlockScratch<T>& d = *io.scratch;
  if (sequence_split_ > 1) {
    // The full-sequence sides live in the scratch buffers (resized once: collectives in flight
    // keep their pointers).
    const auto full = static_cast<std::size_t>(rows()) * width_;
    for (std::vector<T>* v : {&d.sequence_input, &d.sequence_partial, &d.sequence_dy})
      if (v->size() != full) v->resize(full);
    T* in = d.sequence_input.data();
    T* partial = d.sequence_partial.data();
    T* dy = d.sequence_dy.data();
    switch (layer) {
      case 0: return {&qkv_, in, a.qkv_out.data(), d.d_qkv.data(), partial, a.ln1.data(), d.d_norm.data()};
      case 1: return {&proj_, a.att.data(), partial, dy, d.d_att.data(), d.d_mid.data(), a.mid.data()};
      case 2:
        return {&up_, in, a.up_out.data(), activation_ == Activation::swiglu ? d.d_up.data() : d.d_mlp.data(), partial,
                a.ln2.data(), d.d_norm.data()};
      default: return {&down_, a.gelu_out.data(), partial, dy, d.d_mlp.data(), io.dx_out, io.x_out};
    }
  }
  switch (layer) {
    case 0: return {&qkv_, a.ln1.data(), a.qkv_out.data(), d.d_qkv.data(), d.d_norm.data()};
    case 1: return {&proj_, a.att.data(), a.mid.data(), d.d_mid.data(), d.d_att.data()};
    case 2:
      return {&up_, a.ln2.data(), a.up_out.data(), activation_ == Activation::swiglu ? d.d_up.data() : d.d_mlp.data(),
              d.d_norm.data()};
    default: return {&down_, a.gelu_out.data(), io.x_out, io.dx_out, d.d_mlp.data()};
  }
}

template <class T>
void Block<T>::compute_norm(const StepOp& op, ParameterStore<T>& s, const BlockBuffers<T>& io) {
  const int m = shard_rows(), w = width_;
  const NormOperands n = norm(op.layer, io);
  if (op.task == StepTask::norm_row_sums && op.layer == 1) {  // ln2 normalises the attention output plus the block input
    BlockActivations<T>& a = *io.activations;
    for (std::size_t i = 0; i < a.mid.size(); ++i) a.mid[i] += io.x_in[i];
  }
  // ln1's input gradient starts as the residual's (the gradient passed straight through).
  if (op.task == StepTask::norm_backward_dx && op.layer == 0)
    std::copy(io.scratch->d_mid.begin(), io.scratch->d_mid.end(), io.dx_in);
  if (norm_kind_ == NormKind::rmsnorm) {
    rms_norm_stage(op, NormStage<T>{n.x, s.value(n.gamma), n.y, n.rstd, n.dy, n.dx, s.grad(n.gamma), m, w, hidden_},
                   io.scratch->norm_sums);
    return;
  }
  switch (op.task) {
    case StepTask::norm_row_sums:
      layer_norm_row_sums(n.x, n.mean, m, w);
      break;
    case StepTask::norm_deviations:
      layer_norm_deviations(n.x, n.mean, n.rstd, m, w, hidden_);
      break;
    case StepTask::norm_normalize:
      layer_norm_normalize(n.x, s.value(n.gamma), s.value(n.beta), n.y, n.mean, n.rstd, m, w, hidden_);
      break;
    case StepTask::norm_backward_sums:
      io.scratch->norm_sums.resize(2 * static_cast<std::size_t>(m));
      layer_norm_backward_sums(n.dy, n.x, s.value(n.gamma), n.mean, n.rstd, io.scratch->norm_sums.data(),
                               s.grad(n.gamma), s.grad(n.beta), m, w);
      break;
    case StepTask::norm_backward_dx:
      layer_norm_backward_dx(n.dy, n.x, s.value(n.gamma), n.mean, n.rstd, io.scratch->norm_sums.data(), n.dx, m, w,
                             hidden_);
      break;
    default:
      throw std::logic_error("step op " + op.name + " is not a layer-norm stage");
  }
}

template <class T>
void Block<T>::compute_fc(const StepOp& op, const LayerContext<T>& ctx, const BlockBuffers<T>& io) {
  const int m = rows();
  const FcOperands f = fc(op.layer, io);
  switch (op.task) {
    case StepTask::fc_forward_gemm:
      f.layer->forward_gemm(ctx, f.x, f.y, m);
      break;
    case StepTask::fc_bias_add:
      // A reduce-scattered output gets its bias on its sequence shard.
      if (sequence_split_ > 1 && f.layer->out_group() != CommGroup::y)
        f.layer->add_bias(ctx.store, f.shard_out, shard_rows());
      else
        f.layer->add_bias(ctx.store, f.y, m);
      break;
    case StepTask::fc_dx_gemm:
      f.layer->dx_gemm(ctx, f.dy, f.dx, m);
      break;
    case StepTask::fc_dw_gemm:
      f.layer->dw_gemm(ctx, f.x, f.dy, m);
      break;
    case StepTask::fc_gradient_add:
      f.layer->add_gradient_shard(ctx.store);
      break;
    case StepTask::fc_bias_grad:
      f.layer->bias_grad(ctx.store, f.dy, m);
      break;
    default:
      throw std::logic_error("step op " + op.name + " is not an FC layer's");
  }
}

template <class T>
void Block<T>::compute(const StepOp& op, const LayerContext<T>& ctx, const BlockBuffers<T>& io) {
  const int m = rows();
  auto& s = ctx.store;
  BlockActivations<T>& a = *io.activations;
  BlockScratch<T>& d = *io.scratch;
  switch (op.task) {
    case StepTask::norm_row_sums:
    case StepTask::norm_deviations:
    case StepTask::norm_normalize:
    case StepTask::norm_backward_sums:
    case StepTask::norm_backward_dx:
      compute_norm(op, s, io);
      break;
    case StepTask::fc_forward_gemm:
    case StepTask::fc_bias_add:
    case StepTask::fc_dx_gemm:
    case StepTask::fc_dw_gemm:
    case StepTask::fc_gradient_add:
    case StepTask::fc_bias_grad:
      compute_fc(op, ctx, io);
      break;
    case StepTask::attention_forward:
      attention_forward(attention_, a.qkv_out.data(), a.att.data(), a.probs.data());
      break;
    case StepTask::attention_backward:
      attention_backward(attention_, a.qkv_out.data(), a.probs.data(), d.d_att.data(), d.d_qkv.data(),
                         d.d_probs.data());
      break;
    case StepTask::gelu_forward:
      if (activation_ == Activation::swiglu)
        swiglu_forward(a.up_out.data(), a.gelu_out.data(), m, down_.in_local());
      else
        gelu_forward(a.up_out.data(), a.gelu_out.data(), a.gelu_tanh.data(), a.up_out.size());
      break;
    case StepTask::gelu_backward:
      if (activation_ == Activation::swiglu)
        swiglu_backward(a.up_out.data(), d.d_mlp.data(), d.d_up.data(), m, down_.in_local());
      else
        gelu_backward(a.up_out.data(), a.gelu_tanh.data(), d.d_mlp.data(), d.d_mlp.data(), d.d_mlp.size());
      break;
    case StepTask::rope_forward:
      rope(a.qkv_out.data(), false);
      break;
    case StepTask::rope_backward:
      rope(d.d_qkv.data(), true);
      break;
    case StepTask::residual_add:
      for (std::size_t i = 0; i < a.mid.size(); ++i) io.x_out[i] += a.mid[i];
      break;
    case StepTask::residual_copy: {
      // The first op of the block's backward: the residual passes dx_out straight through.
      const auto rows_w = static_cast<std::size_t>(shard_rows()) * width_;
      d.d_mid.assign(io.dx_out, io.dx_out + rows_w);
      d.d_norm.resize(rows_w), d.d_att.resize(a.att.size());
      d.d_mlp.resize(activation_ == Activation::swiglu ? a.gelu_out.size() : a.up_out.size());
      d.d_up.resize(activation_ == Activation::swiglu ? a.up_out.size() : 0);
      d.d_qkv.resize(a.qkv_out.size()), d.d_probs.resize(static_cast<std::size_t>(seq_) * seq_);
      break;
    }
    default:
      throw std::logic_error("step op " + op.name + " is not a block's");
  }
}

template <class T>
CollectiveBuffers<T> Block<T>::sequence_buffers(const StepOp& op, const BlockBuffers<T>& io) {
  const FcOperands f = fc(op.layer, io);
  const bool column_parallel = f.layer->out_group() == CommGroup::y;
  const auto shard = static_cast<std::size_t>(shard_rows());
  const auto in = static_cast<std::size_t>(f.layer->in_local()), out = static_cast<std::size_t>(f.layer->out_local());
  if (op.collective == CollectiveOp::all_gather) {
    // A column-parallel layer's input (forward, and again for dW), a row-parallel one's dY.
    if (column_parallel) return {f.shard_in, io.scratch->sequence_input.data(), shard * in};
    return {f.shard_in, io.scratch->sequence_dy.data(), shard * out};
  }
  // Reduce-scatters: a row-parallel layer's output, a column-parallel one's dX.
  if (op.task == StepTask::fc_forward_sum) return {f.y, f.shard_out, shard * out};
  return {f.dx, f.shard_out, shard * in};
}

template <class T>
CollectiveBuffers<T> Block<T>::buffers(const StepOp& op, ParameterStore<T>& store, const BlockBuffers<T>& io) {
  const auto m = static_cast<std::size_t>(shard_rows());  // the norms' rows
  if ((op.task == StepTask::fc_forward_sum || op.task == StepTask::fc_dx_sum) &&
      op.collective != CollectiveOp::all_reduce)
    return sequence_buffers(op, io);
  switch (op.task) {
    case StepTask::norm_mean_sum:
      return {nullptr, norm(op.layer, io).mean, m};
    case StepTask::norm_variance_sum:
      return {nullptr, norm(op.layer, io).rstd, m};
    case StepTask::norm_backward_sum:
      return {nullptr, io.scratch->norm_sums.data(), io.scratch->norm_sums.size()};
    case StepTask::weight_gather:
      return fc(op.layer, io).layer->weight_gather(store);
    case StepTask::fc_forward_sum: {
      const FcOperands f = fc(op.layer, io);
      return f.layer->output_sum(f.y, rows());
    }
    case StepTask::fc_dx_sum: {
      const FcOperands f = fc(op.layer, io);
      return f.layer->dx_sum(f.dx, rows());
    }
    case StepTask::fc_dw_scatter:
      return fc(op.layer, io).layer->dw_scatter();
    default:
      throw std::logic_error("step op " + op.name + " is not a collective of a block");
  }
}

template class Block<float>;
template class Block<double>;

}  // namespace ws
