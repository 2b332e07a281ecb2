// Closed-form step model of ../shared/docs/4d-algorithm.md. Every transformer block has four FC
// layers (QKV normal, attention output transposed, MLP up normal, MLP down transposed); the LM
// head is a normal FC layer (k = h over X, n = V over Y). Per FC layer, with k_local / n_local
// the in/out features this rank owns (normal: k/Gx, n/Gy; transposed: k/Gy, n/Gx) and m tokens:
//   forward:  Z all-gather of the block (k_local*n_local), GEMM m x n_local x k_local, all-reduce
//             of the m x n_local partial output over the group that splits k (X for normal layers)
//   backward: Z all-gather again, dX GEMM + all-reduce of m x k_local over the group that splits n,
//             dW GEMM + Z reduce-scatter of the k_local x n_local block
//   after:    data-parallel all-reduce of the k_local*n_local/Gz shard.
// Attention core: QK^T and softmax.V for heads/Gy heads of B/(Gdata*Gz) sequences as batched GEMMs
// (full S x S products, as the flop formula counts them); backward costs twice the forward.
// Element-wise work (layer norms, residual adds, GELU, softmax, cross-entropy, embedding) is a
// memory roofline: elements read + written x bytes / device memory bandwidth; backward moves twice
// the forward bytes. Layer-norm statistics and the cross-entropy max/sum all-reduces are a few
// floats per token and are left out.
// Recomputation re-runs each block's forward compute in its backward, and with it the forward
// output all-reduces (on the critical path); the backward Z all-gather serves both.
//
// Overlap (each switchable):
//   forward output all-reduce: always exposed.
//   OAR: dX all-reduce exposed = max(0, t_AR - t_dW_GEMM) per layer, else whole.
//   OAG: all-gather of layer i exposed = max(0, t_AG_i - compute of layer i-1) (forward order in
//        forward, backward order in backward), the first one whole; else whole.
//   ORS: the Z reduce-scatters form a serial queue on the Z communicator, each issued when its
//        layer's backward compute ends; exposed = max(0, queue end - end of backward compute).
//        Conservative: the exposed waits of other collectives, which would also hide it, are not
//        counted as hiding time. Else the whole sum.
//   Data parallel: with overlap_data_parallel the shard all-reduces queue on the data
//        communicator, each issued when its layer's gradient is reduce-scattered; exposed = the
//        part that ends after both backward compute and the Z queue. Else the whole sum. The
//        replicated small parameters are all-reduced over Z and then over data, at the end.
#include "sim/analytic/step_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "engine/schedule/flops.hpp"
#include "sim/compute/fused_attention.hpp"
#include "sim/compute/gemm_efficiency.hpp"
#include "base/statistics.hpp"
#include "sim/pricing/collective_pricing.hpp"

namespace ws {
namespace {

// One FC layer's costs on this rank.
struct FcCost {
  CommGroup k_group = CommGroup::x;  // splits in-features: forward output all-reduce
  CommGroup n_group = CommGroup::y;  // splits out-features: backward dX all-reduce
  Time forward;                      // GEMM + attached element-wise / attention work
  Time backward;                     // dX + dW GEMMs + backward of the attached work (+ recompute)
  Time dw_gemm;
  Time forward_all_reduce;
  Time backward_all_reduce;
  Time all_gather;
  Time reduce_scatter;
  Time data_all_reduce;
};

Time& exposed_of(StepBreakdown& step, CommGroup kind) {
  switch (kind) {
    case CommGroup::x:
      return step.exposed_x;
    case CommGroup::y:
      return step.exposed_y;
    case CommGroup::z:
      return step.exposed_z;
    // data x Z and the world (gradients replicated over Z, the loss, the gradient norm) count as
    // data-parallel work, as the flow evaluator books them.
    case CommGroup::data:
    case CommGroup::data_z:
    case CommGroup::world:
      return step.exposed_data;
  }
  return step.exposed_data;
}

Time positive(Time t) { return max(Time::zero(), t); }

// The costs of every FC layer of the step on this rank: the four of a block (the same in every
// block) and the LM head, with the element-wise and attention work attached to each.
class LayerCosts {
 public:
  LayerCosts(JobNetwork& network, const ModelSpec& model, const Batch& batch, const Layout& layout,
             const StepOptions& options)
      : network_(network),
        layout_(layout),
        dev_(network.machine().device),
        prec_(options.precision),
        e_(options.bytes_per_element()),
        sequences_(static_cast<double>(batch.sequences) / (static_cast<double>(layout.data) * layout.z)),
        m_(sequences_ * model.sequence_length),
        count_(4 * model.layers + 1) {
    const double h = model.hidden, S = model.sequence_length, V = model.vocabulary, heads = model.heads;
    const double gx = layout.x, gy = layout.y;
    // Work attached to each FC layer (forward; the backward moves twice the bytes / flops).
    const double heads_local = heads / gy;
    const double head_dim = h / heads;
    // A fused kernel (where the machine gives its rate) replaces the score GEMMs and the softmax's
    // traffic; the engine's own attention runs its backward at twice the forward's work.
    const double calls = sequences_ * heads_local;
    const auto fused_forward = fused_attention_time(dev_, prec_, S, head_dim, calls, AttentionPass::forward);
    const auto fused_backward = fused_attention_time(dev_, prec_, S, head_dim, calls, AttentionPass::backward);
    const Time attention =
        fused_forward ? *fused_forward
                      : scale(gemm_time(dev_, prec_, S, S, head_dim) + gemm_time(dev_, prec_, S, head_dim, S), calls);
    const Time attention_backward = fused_backward ? *fused_backward : 2 * attention;
    const double layer_norm = 2.0 * m_ * h / gx, residual = 3.0 * m_ * h / gx;
    const double softmax = fused_forward ? 0.0 : 2.0 * calls * S * S;
    const double gelu = 2.0 * m_ * 4.0 * h / gy;
    const Time qkv_extra = elementwise(layer_norm + softmax) + attention;
    const Time qkv_extra_backward = 2 * elementwise(layer_norm + softmax) + attention_backward;
    const Time out_extra = elementwise(residual + layer_norm);
    const Time up_extra = elementwise(gelu);
    const Time down_extra = elementwise(residual);
    const bool rc = options.recompute;
    block_[0] = fc(h, 3.0 * h, false, qkv_extra, qkv_extra_backward, rc);
    block_[1] = fc(h, h, true, out_extra, 2 * out_extra, rc);
    block_[2] = fc(h, 4.0 * h, false, up_extra, 2 * up_extra, rc);
    block_[3] = fc(4.0 * h, h, true, down_extra, 2 * down_extra, rc);
    // LM head with the embedding lookup, final layer norm and cross-entropy attached; never recomputed.
    const Time head_extra = elementwise(m_ * h / gx + layer_norm + 2.0 * m_ * V / gy);
    head_ = fc(h, V, false, head_extra, 2 * head_extra, false);
  }

  int count() const { return count_; }
  bool is_head(int i) const { return i == count_ - 1; }
  const FcCost& operator[](int i) const { return is_head(i) ? head_ : block_[i % 4]; }

  // Each collective alone on the job's network (the closed form of sim/pricing).
  Time collective(CollectiveOp op, CommGroup kind, double bytes) const {
    const CommGroup group = kind == CommGroup::x   ? CommGroup::x
                            : kind == CommGroup::y ? CommGroup::y
                            : kind == CommGroup::z ? CommGroup::z
                                                   : CommGroup::data;
    return collective_time(network_, layout_, CollectiveCall{group, op, static_cast<Bytes>(std::llround(bytes))});
  }

 private:
  Time elementwise(double elements) const { return transfer_time(elements * e_, dev_.memory_bandwidth); }

  FcCost fc(double k, double n, bool transposed, Time fwd_extra, Time bwd_extra, bool recomputed) const {
    FcCost c;
    c.k_group = transposed ? CommGroup::y : CommGroup::x;
    c.n_group = transposed ? CommGroup::x : CommGroup::y;
    const double gx = layout_.x, gy = layout_.y, gz = layout_.z;
    const double k_local = k / (transposed ? gy : gx);
    const double n_local = n / (transposed ? gx : gy);
    const Time fwd_gemm = gemm_time(dev_, prec_, m_, n_local, k_local);
    const Time dx_gemm = gemm_time(dev_, prec_, m_, k_local, n_local);
    c.dw_gemm = gemm_time(dev_, prec_, k_local, n_local, m_);
    c.forward = fwd_gemm + fwd_extra;
    c.backward = dx_gemm + c.dw_gemm + bwd_extra + (recomputed ? c.forward : Time::zero());
    const double block_bytes = k_local * n_local * e_;
    c.forward_all_reduce = collective(CollectiveOp::all_reduce, c.k_group, m_ * n_local * e_);
    c.backward_all_reduce = collective(CollectiveOp::all_reduce, c.n_group, m_ * k_local * e_);
    c.all_gather = collective(CollectiveOp::all_gather, CommGroup::z, block_bytes);
    c.reduce_scatter = collective(CollectiveOp::reduce_scatter, CommGroup::z, block_bytes);
    c.data_all_reduce = collective(CollectiveOp::all_reduce, CommGroup::data, block_bytes / gz);
    return c;
  }

  JobNetwork& network_;
  const Layout& layout_;
  const DeviceSpec& dev_;
  Precision prec_;
  double e_, sequences_, m_;
  int count_;
  FcCost block_[4];
  FcCost head_;
};

// Forward, in layer order. Returns the last layer's compute (what hides backward's first gather).
Time add_forward(StepBreakdown& step, const LayerCosts& layers, const StepOptions& options) {
  Time previous_compute;
  for (int i = 0; i < layers.count(); ++i) {
    const FcCost& c = layers[i];
    step.compute += c.forward;
    exposed_of(step, c.k_group) += c.forward_all_reduce;
    const bool hide = options.overlap_all_gather && i > 0;
    step.exposed_z += hide ? positive(c.all_gather - previous_compute) : c.all_gather;
    previous_compute = c.forward;
  }
  return previous_compute;
}

// Backward, in reverse layer order, on a timeline of backward compute only, with the ORS and
// data-parallel queues; then the replicated small parameters' all-reduces.
void add_backward(StepBreakdown& step, const LayerCosts& layers, const ModelSpec& model, const Layout& layout,
                  const StepOptions& options, Time previous_compute) {
  Time t;            // end of backward compute so far
  Time z_queue_end;  // ORS queue on the Z communicator
  Time data_queue_end;
  Time rs_sum, data_sum;
  for (int j = 0; j < layers.count(); ++j) {
    const int i = layers.count() - 1 - j;
    const FcCost& c = layers[i];
    step.compute += c.backward;
    if (options.recompute && !layers.is_head(i)) exposed_of(step, c.k_group) += c.forward_all_reduce;
    const bool hide = options.overlap_all_gather && j > 0;
    step.exposed_z += hide ? positive(c.all_gather - previous_compute) : c.all_gather;
    previous_compute = c.backward;
    exposed_of(step, c.n_group) +=
        options.overlap_all_reduce ? positive(c.backward_all_reduce - c.dw_gemm) : c.backward_all_reduce;
    t += c.backward;
    z_queue_end = max(z_queue_end, t) + c.reduce_scatter;
    rs_sum += c.reduce_scatter;
    data_queue_end =
        max(data_queue_end, options.overlap_reduce_scatter ? z_queue_end : t) + c.data_all_reduce;
    data_sum += c.data_all_reduce;
  }
  step.exposed_z += options.overlap_reduce_scatter ? positive(z_queue_end - t) : rs_sum;
  step.exposed_data +=
      options.overlap_data_parallel
          ? positive(data_queue_end - max(t, options.overlap_reduce_scatter ? z_queue_end : t))
          : data_sum;
  // Replicated small parameters (biases, layer norms: see memory.cpp), all-reduced over Z then data.
  const double h = model.hidden, gx = layout.x, gy = layout.y;
  const double small_bytes = options.bytes_per_element() *
                             (model.layers * (3.0 * h / gy + h / gx + 4.0 * h / gy + h / gx + 4.0 * h / gx) +
                              2.0 * h / gx);
  step.exposed_z += layers.collective(CollectiveOp::all_reduce, CommGroup::z, small_bytes);
  step.exposed_data += layers.collective(CollectiveOp::all_reduce, CommGroup::data, small_bytes);
}

// The slowest device paces the job; each layer's synchronizations wait for a group's slowest
// member (the step simulator's rules, sim/step, priced per layer here).
void add_skew(StepBreakdown& step, const LayerCosts& layers, const Variability& v, const Layout& layout) {
  step.skew += scale(step.compute, v.device_speed_spread * expected_max_of_normals(layout.devices()));
  double lag[4];  // expected maximum of each group kind's members, in standard deviations
  for (const CommGroup kind : {CommGroup::x, CommGroup::y, CommGroup::z, CommGroup::data})
    lag[static_cast<int>(kind)] = expected_max_of_normals(group_size(layout, kind));
  auto wait = [&](CommGroup kind, Time span) {
    const double noise = v.compute_noise * span.seconds(), jitter = v.collective_entry_jitter.seconds();
    return Time::from_seconds(std::sqrt(noise * noise + jitter * jitter) * lag[static_cast<int>(kind)]);
  };
  for (int i = 0; i < layers.count(); ++i) {
    const FcCost& c = layers[i];
    step.skew += wait(c.k_group, c.forward) + wait(CommGroup::z, c.forward) + wait(c.n_group, c.backward) +
                 wait(CommGroup::z, c.backward);
  }
  step.skew += wait(CommGroup::data, step.compute);
}

}  // namespace

LayoutEstimate estimate_step(JobNetwork& network, const ModelSpec& model, const Batch& batch, const Layout& layout,
                             const StepOptions& options) {
  const DeviceSpec& dev = network.machine().device;
  const LayerCosts layers(network, model, batch, layout, options);
  LayoutEstimate est;
  est.layout = layout;
  StepBreakdown& step = est.step;
  add_backward(step, layers, model, layout, options, add_forward(step, layers, options));
  if (options.variability) add_skew(step, layers, network.machine().variability, layout);

  est.memory = estimate_memory(model, batch, layout, options.bytes_per_element(), options.recompute);
  est.fits_memory = est.memory.total_bytes() <= dev.memory_capacity_bytes;
  est.hardware_flops = hardware_flops_per_step(model, batch);
  est.model_flops = model_flops_per_step(model, batch);
  const double seconds = step.total().seconds();
  const double peak_job = seconds * layout.devices() * peak(dev, options.precision).flops();
  if (seconds > 0) {
    est.sustained_flops_per_s = executed_flops_per_step(model, batch, options.recompute) / seconds;
    est.hardware_peak_fraction = est.hardware_flops / peak_job;
    est.model_peak_fraction = est.model_flops / peak_job;
  }
  return est;
}

LayoutEstimate estimate_step(const Machine& machine, const ModelSpec& model, const Batch& batch,
                             const Layout& layout, const StepOptions& options) {
  JobNetwork network(machine, layout.devices(), options.allocation);
  return estimate_step(network, model, batch, layout, options);
}

}  // namespace ws
