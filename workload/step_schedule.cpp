// The step schedule: the order of a step's work, which the engine executes op by op and the
// simulator prices. Each section below names the engine code that runs its ops. Memory traffic
// of element-wise phases counts the passes each kernel makes over its operands (reads + writes,
// whole rows); GEMMs carry their exact shapes.
#include "workload/step_schedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <cassert>
#include <cmath>
#include <string>
#include <string_view>

#include "workload/pipeline.hpp"

namespace ws {

const char* to_string(StageStream stream) {
  switch (stream) {
    case StageStream::activations:
      return "activations";
    case StageStream::gradients:
      return "gradients";
    case StageStream::embedding_gradients:
      return "embedding_gradients";
  }
  return "?";
}

const char* to_string(ComputeKind kind) {
  switch (kind) {
    case ComputeKind::input:
      return "input";
    case ComputeKind::embedding:
      return "embedding";
    case ComputeKind::layer_norm:
      return "layer_norm";
    case ComputeKind::gemm:
      return "gemm";
    case ComputeKind::attention:
      return "attention";
    case ComputeKind::gelu:
      return "gelu";
    case ComputeKind::residual:
      return "residual";
    case ComputeKind::bias_grad:
      return "bias_grad";
    case ComputeKind::cross_entropy:
      return "cross_entropy";
    case ComputeKind::optimizer:
      return "optimizer";
    case ComputeKind::untraced:
      return "untraced";
  }
  return "?";
}

namespace {

// A block's tensors in rank_tensors: its norms' vectors (gamma, and beta for LayerNorm), then each
// FC layer's weight (and bias).
int tensors_per_block(const ModelSpec& model) {
  return (model.norm == NormKind::layernorm ? 4 : 2) + (model.biases ? 8 : 4);
}
// Tensors before the first block (wte, and wpe for learned positions) and after the last (the
// final norm's vectors, then the LM head when it is untied).
std::size_t leading_tensors(const ModelSpec& model) { return model.position == Position::learned ? 2 : 1; }
std::size_t trailing_tensors(const ModelSpec& model) {
  return (model.norm == NormKind::layernorm ? 2 : 1) + (model.tied_embeddings ? 0 : 1);
}
constexpr std::uint64_t kScalarBytes = sizeof(double);  // loss and gradient-norm sums are double
constexpr std::uint64_t kFloatBytes = sizeof(float);    // the vocabulary-parallel loss's row sums
std::uint64_t as_bytes(long long count) { return static_cast<std::uint64_t>(count); }
constexpr double kTokenBytes = sizeof(int);
constexpr double kResidualPasses = 3.0;  // a residual add reads two activations and writes one

// One FC layer of the 4D algorithm on this rank (engine/model/fc_layer.cpp).
struct FcShape {
  int block = 0, index = 0;  // index in the block: 0 qkv, 1 proj, 2 up, 3 down
  long long k_local = 0, n_local = 0;
  CommGroup in_group = CommGroup::x, out_group = CommGroup::y;
};

FcShape fc_shape(int block, int index, long long k, long long n, bool transposed, const Layout& layout) {
  const long long in = transposed ? layout.y : layout.x, out = transposed ? layout.x : layout.y;
  return FcShape{block, index, k / in, n / out, transposed ? CommGroup::y : CommGroup::x,
                 transposed ? CommGroup::x : CommGroup::y};
}

// "qkv", and "block3.qkv" (the engine's name for the layer).
const char* fc_part(const FcShape& fc) {
  static constexpr const char* kNames[] = {"qkv", "proj", "up", "down"};
  return kNames[fc.index];
}

double as_double(long long v) { return static_cast<double>(v); }

std::string block_prefix(int block) { return "block" + std::to_string(block) + "."; }
std::string fc_name(const FcShape& fc) { return block_prefix(fc.block) + fc_part(fc); }

// Engine block member order: qkv (normal), proj (transposed), up (normal), down (transposed).
// The QKV and MLP-up widths follow the model (grouped-query K and V, SwiGLU's fused gate and up).
std::array<FcShape, 4> block_layers(const ModelSpec& model, const Layout& layout, int block) {
  const long long h = model.hidden;
  return {fc_shape(block, 0, h, model.qkv_features(), false, layout), fc_shape(block, 1, h, h, true, layout),
          fc_shape(block, 2, h, model.up_features(), false, layout),
          fc_shape(block, 3, model.ffn(), h, true, layout)};
}

// Where the ops being emitted run: stamped on each (StepOp::block, layer, recomputed).
struct Site {
  int block = -1, layer = -1;
  bool recomputed = false;
};

// A range [first, last) of rank_tensors().
struct TensorRange {
  std::size_t first = 0, last = 0;
};

class ScheduleBuilder {
 public:
  ScheduleBuilder(const ModelSpec& model, const Layout& layout, long long sequences_global,
                  const StepScheduleOptions& options, OpNames names, int stage = 0)
      : model_(model), layout_(layout), options_(options), names_(names == OpNames::trace),
        tensors_(rank_tensors(model, layout)), stage_(stage) {
    sequences_total_ = sequences_global / (static_cast<long long>(layout.data) * layout.z);
    // A pipelined step runs the rank's sequences in micro-batches; each op sizes one.
    sequences_ = sequences_total_ / layout.micro_batches;
    m_ = sequences_ * model.sequence_length;
    width_ = model.hidden / layout.x;
    e_ = options.bytes_per_element();
    owned_.assign(tensors_.size(), true);
    if (layout.pipelined()) own_stage_tensors();
    for (std::size_t t = 0; t < tensors_.size(); ++t)
      if (owned_[t]) parameters_ += tensors_[t].elements;
    pending_.assign(static_cast<std::size_t>(model_.layers), BlockPending{});
    // 54-108 ops a block (recompute, overlaps and data parallelism add some): one allocation instead
    // of a dozen reallocations that move every op, which a study pays for each layout it simulates.
    ops_.reserve(static_cast<std::size_t>(model_.layers) * 112 + 64);
  }

  StepSchedule step() && {
    if (layout_.pipelined())
      pipeline_step();
    else
      trainer_step();
    return finish();
  }

  StepSchedule pass(ModelPass pass) && {
    model_only_ = true;
    switch (pass) {
      case ModelPass::forward:
        gpt_forward(true);
        break;
      case ModelPass::logits:
        gpt_forward(false);
        break;
      case ModelPass::backward:
        gpt_backward();
        break;
    }
    return finish();
  }

 private:
  StepSchedule finish() {
    return StepSchedule{model_, layout_, sequences_total_, options_.precision, std::move(ops_), stage_};
  }

  // --- primitives: what Timeline records -----------------------------------------------------
  void push(StepOp op) {
    op.block = site_.block, op.layer = site_.layer, op.recomputed = site_.recomputed;
    op.chunk = action_.chunk, op.micro_batch = action_.micro_batch;
    ops_.push_back(std::move(op));
  }
  void compute(StepTask task, std::string name, ComputeKind kind, std::vector<GemmCall> gemms, double memory_bytes) {
    StepOp op;
    op.kind = StepOpKind::compute, op.task = task, op.compute = kind;
    if (names_) op.name = std::move(name);
    // Every count below is a whole number of bytes, exact in a double up to 2^53.
    op.gemms = std::move(gemms), op.memory_bytes = static_cast<Bytes>(std::llround(memory_bytes));
    push(std::move(op));
  }
  // The last compute op runs `kernel`'s per-element arithmetic over `elements`.
  void arithmetic(ElementwiseKernel kernel, double elements) {
    ops_.back().kernel = kernel;
    ops_.back().elements = elements;
  }
  // Work between the engine's spans: real step time, no trace event.
  void untraced(StepTask task, std::string name, double memory_bytes) {
    compute(task, std::move(name), ComputeKind::untraced, {}, memory_bytes);
    ops_.back().traced = false;
  }
  // A trace name from its parts; none when the schedule is only priced (OpNames::none), where
  // building the names was a third of a study's time.
  template <class... Parts>
  std::string label(const Parts&... parts) const {
    std::string name;
    if (names_) (name.append(std::string_view(parts)), ...);
    return name;
  }
  // "fwd.block3.qkv.gemm": the phase, the site's block and the parts.
  template <class... Parts>
  std::string phase_name(const char* phase, const Parts&... parts) const {
    if (!names_) return {};  // before block_prefix builds its string
    return site_.block < 0 ? label(phase, ".", parts...) : label(phase, ".", block_prefix(site_.block), parts...);
  }
  StepOp collective_op(StepTask task, CollectiveOp op, CommGroup group, std::uint64_t bytes, bool blocking) const {
    StepOp c;
    c.kind = StepOpKind::collective, c.task = task;
    c.name = label(trace_name(op), ".", to_string(group));
    c.collective = op, c.group = group, c.bytes = bytes, c.blocking = blocking;
    return c;
  }
  // A group of one rank never calls MPI and records nothing (engine/comm/communicator.hpp).
  void blocking(StepTask task, CollectiveOp op, CommGroup group, std::uint64_t bytes) {
    if (group_size(layout_, group) > 1) push(collective_op(task, op, group, bytes, true));
  }
  std::size_t issue(StepTask task, CollectiveOp op, CommGroup group, std::uint64_t bytes) {
    if (group_size(layout_, group) == 1) return kNoOp;
    push(collective_op(task, op, group, bytes, false));
    return ops_.size() - 1;
  }
  // The wait keeps its collective's site: the engine finds the request and buffers there.
  void wait(std::size_t issued) {
    if (issued == kNoOp) return;
    StepOp w = ops_[issued];
    w.kind = StepOpKind::wait, w.name = label("wait.", w.name), w.partner = issued;
    ops_[issued].partner = ops_.size();
    ops_.push_back(std::move(w));
  }
  std::uint64_t elements_bytes(long long elements) const {
    return static_cast<std::uint64_t>(elements) * static_cast<std::uint64_t>(e_);
  }
  // Bytes of `passes` reads or writes of an m x width activation (the residual stream's shard).
  double activation_bytes(double passes) const { return passes * as_double(rows()) * as_double(width_) * e_; }
  // Tokens of the residual stream on this rank: the micro-batch's, or 1 / tp of them with sequence
  // parallelism (norms, residuals and stage transfers work on the rank's sequence shard).
  bool sequence_parallel() const { return layout_.sequence_parallel && layout_.y > 1; }
  long long rows() const { return sequence_parallel() ? m_ / layout_.y : m_; }

  // --- engine/model/fc_layer.cpp ---------------------------------------------------------------
  std::uint64_t weight_block_bytes(const FcShape& fc) const {
    return elements_bytes(fc.k_local * fc.n_local);
  }
  void at(const FcShape& fc) { site_.block = fc.block, site_.layer = fc.index; }

  void fc_start_gather(const FcShape& fc, std::size_t& gather) {
    at(fc);
    if (layout_.z > 1)
      gather = issue(StepTask::weight_gather, CollectiveOp::all_gather, CommGroup::z, weight_block_bytes(fc));
  }

  void fc_forward(const char* phase, const FcShape& fc, std::size_t& gather) {
    at(fc);
    if (gather != kNoOp) {
      wait(gather);
      gather = kNoOp;
    } else if (layout_.z > 1) {
      blocking(StepTask::weight_gather, CollectiveOp::all_gather, CommGroup::z, weight_block_bytes(fc));
    }
    // Sequence parallelism: a column-parallel layer gathers its input's sequence shards over Y, a
    // row-parallel one reduce-scatters its partial output back into them.
    const bool column_parallel = fc.out_group == CommGroup::y;
    if (sequence_parallel() && column_parallel)
      blocking(StepTask::fc_forward_sum, CollectiveOp::all_gather, CommGroup::y, elements_bytes(m_ * fc.k_local));
    compute(StepTask::fc_forward_gemm, phase_name(phase, fc_part(fc), ".gemm"), ComputeKind::gemm,
            {{m_, fc.n_local, fc.k_local}}, 0);
    blocking(StepTask::fc_forward_sum,
             sequence_parallel() && !column_parallel ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce,
             fc.in_group, elements_bytes(m_ * fc.n_local));
    if (!model_.biases) return;
    // The bias is added after the sum so that it counts once: read-modify-write of y (a
    // reduce-scattered output's sequence shard).
    const long long bias_rows = sequence_parallel() && !column_parallel ? rows() : m_;
    untraced(StepTask::fc_bias_add, phase_name(phase, fc_part(fc), ".bias_add"),
             2.0 * as_double(bias_rows * fc.n_local) * e_);
  }

  // Adds the reduce-scattered dW shard into the gradient (FcLayer::add_gradient_shard).
  void fc_gradient_add(const FcShape& fc) {
    untraced(StepTask::fc_gradient_add, label("bwd.", block_prefix(fc.block), fc_part(fc), ".grad_add"),
             3.0 * as_double(fc.k_local * fc.n_local / layout_.z) * e_);
  }

  // dW = x^T dy in row tiles of dW when the job has more than one rank (progress between tiles).
  std::vector<GemmCall> weight_gradient_tiles(const FcShape& fc) const {
    const long long tiles =
        layout_.devices() > 1 ? std::clamp<long long>(options_.weight_gradient_tiles, 1, fc.k_local) : 1;
    std::vector<GemmCall> calls;
    for (long long t = 0; t < tiles; ++t) {
      const long long first = fc.k_local * t / tiles, last = fc.k_local * (t + 1) / tiles;
      calls.push_back({last - first, fc.n_local, m_, 1});
    }
    return calls;
  }

  void fc_backward(const FcShape& fc, std::size_t& scatter) {
    at(fc);
    // Sequence parallelism (Megatron-LM): a row-parallel layer's output gradient arrives as sequence
    // shards and is gathered over Y; a column-parallel layer gathers its input again for dW (issued
    // before dX, waited for before dW) and reduce-scatters dX instead of all-reducing it.
    const bool column_parallel = fc.out_group == CommGroup::y;
    std::size_t input_gather = kNoOp;
    if (sequence_parallel() && !column_parallel)
      blocking(StepTask::fc_dx_sum, CollectiveOp::all_gather, CommGroup::y, elements_bytes(m_ * fc.n_local));
    if (sequence_parallel() && column_parallel)
      input_gather = issue(StepTask::fc_dx_sum, CollectiveOp::all_gather, CommGroup::y, elements_bytes(m_ * fc.k_local));
    compute(StepTask::fc_dx_gemm, phase_name("bwd", fc_part(fc), ".dx_gemm"), ComputeKind::gemm,
            {{m_, fc.k_local, fc.n_local}}, 0);
    const std::uint64_t dx_bytes = elements_bytes(m_ * fc.k_local);
    const CollectiveOp dx_op = sequence_parallel() && column_parallel ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
    std::size_t dx_sum = kNoOp;
    wait(input_gather);
    if (options_.overlap_all_reduce)
      dx_sum = issue(StepTask::fc_dx_sum, dx_op, fc.out_group, dx_bytes);
    else
      blocking(StepTask::fc_dx_sum, dx_op, fc.out_group, dx_bytes);
    compute(StepTask::fc_dw_gemm, phase_name("bwd", fc_part(fc), ".dw_gemm"), ComputeKind::gemm,
            weight_gradient_tiles(fc), 0);
    if (layout_.z > 1) {
      if (options_.overlap_reduce_scatter)
        scatter = issue(StepTask::fc_dw_scatter, CollectiveOp::reduce_scatter, CommGroup::z, weight_block_bytes(fc));
      else {
        blocking(StepTask::fc_dw_scatter, CollectiveOp::reduce_scatter, CommGroup::z, weight_block_bytes(fc));
        fc_gradient_add(fc);
      }
    }
    // Column sums of dy: one read of it.
    if (model_.biases)
      compute(StepTask::fc_bias_grad, phase_name("bwd", fc_part(fc), ".bias_grad"), ComputeKind::bias_grad, {},
              as_double(m_ * fc.n_local) * e_);
    wait(dx_sum);
  }

  // --- engine/kernels/layer_norm.cpp: stages around the row sums over X ------------------------
  // A stage carries its share of the kernel's memory passes and the same share of its per-element
  // arithmetic, so the stages of a norm cost what the whole kernel costs (calibrate measures the
  // whole kernel). Forward: pass 1 reads x (sums), pass 2 reads x (deviations), pass 3 reads x
  // and writes y; `extra_passes` (ln2's residual add: read two, write one) come before pass 1.
  // RMSNorm has no mean: pass 1 sums the squares, one all-reduce, pass 2 reads x and writes y.
  // Its per-element arithmetic is its own kernel's (ElementwiseKernel::rms_norm_*).
  void norm_forward(const char* phase, const char* norm, int layer, double extra_passes) {
    site_.layer = layer;
    const bool rms = model_.norm == NormKind::rmsnorm;
    const double elements = layer_norm_elements(), total = (rms ? 3.0 : 4.0) + extra_passes;
    auto stage = [&](StepTask task, const char* what, double passes) {
      compute(task, phase_name(phase, norm, ".", what), ComputeKind::layer_norm, {}, activation_bytes(passes));
      arithmetic(rms ? ElementwiseKernel::rms_norm_forward : ElementwiseKernel::layer_norm_forward,
                 elements * passes / total);
    };
    if (rms) {
      stage(StepTask::norm_row_sums, "sum_squares", 1.0 + extra_passes);
      blocking(StepTask::norm_variance_sum, CollectiveOp::all_reduce, CommGroup::x, elements_bytes(rows()));
      stage(StepTask::norm_normalize, "normalize", 2.0);
      return;
    }
    stage(StepTask::norm_row_sums, "mean", 1.0 + extra_passes);
    blocking(StepTask::norm_mean_sum, CollectiveOp::all_reduce, CommGroup::x, elements_bytes(rows()));
    stage(StepTask::norm_deviations, "variance", 1.0);
    blocking(StepTask::norm_variance_sum, CollectiveOp::all_reduce, CommGroup::x, elements_bytes(rows()));
    stage(StepTask::norm_normalize, "normalize", 2.0);
  }
  // Backward: stage 1 reads dy and x (row sums, dgamma, dbeta); stage 2 reads them again and
  // read-modify-writes dx; `extra_passes` (ln1's copy of the residual gradient into dx) in stage 2.
  // RMSNorm's backward needs one row sum (of dy * gamma * x), LayerNorm's two.
  void norm_backward(const char* norm, int layer, double extra_passes) {
    site_.layer = layer;
    const double elements = layer_norm_elements(), total = 6.0 + extra_passes;
    const bool rms = model_.norm == NormKind::rmsnorm;
    auto stage = [&](StepTask task, const char* what, double passes) {
      compute(task, phase_name("bwd", norm, ".", what), ComputeKind::layer_norm, {}, activation_bytes(passes));
      arithmetic(rms ? ElementwiseKernel::rms_norm_backward : ElementwiseKernel::layer_norm_backward,
                 elements * passes / total);
    };
    const long long sums = model_.norm == NormKind::rmsnorm ? 1 : 2;
    stage(StepTask::norm_backward_sums, "sums", 2.0);
    blocking(StepTask::norm_backward_sum, CollectiveOp::all_reduce, CommGroup::x, elements_bytes(sums * rows()));
    stage(StepTask::norm_backward_dx, "dx", 4.0 + extra_passes);
  }

  // --- engine/kernels/attention.cpp: per local sequence and head ------------------------------
  long long local_heads() const { return model_.heads / layout_.y; }
  long long head_dim() const { return model_.hidden / model_.heads; }
  std::vector<GemmCall> attention_forward_gemms() const {
    const long long s = model_.sequence_length, d = head_dim(), count = sequences_ * local_heads();
    return {{s, s, d, count}, {s, d, s, count}};  // Q K^T, then P V
  }
  std::vector<GemmCall> attention_backward_gemms() const {
    const long long s = model_.sequence_length, d = head_dim(), count = sequences_ * local_heads();
    return {{s, s, d, count}, {s, d, s, count}, {s, d, s, count}, {s, d, s, count}};  // dP, dV, dQ, dK
  }
  // Softmax: read and write the S x S probabilities (forward); read P, read-modify-write dP (backward).
  double softmax_bytes(double passes) const {
    const double s = model_.sequence_length;
    return passes * s * s * static_cast<double>(sequences_ * local_heads()) * e_;
  }
  double softmax_elements() const {
    const double s = model_.sequence_length;
    return s * s * static_cast<double>(sequences_ * local_heads());
  }
  double layer_norm_elements() const { return as_double(rows()) * as_double(width_); }
  // The MLP activation's output elements on this rank: m x ffn/Gy (GELU's input is as wide; SwiGLU
  // reads a gate and an up value for each).
  double activation_elements() const { return as_double(m_ * (model_.ffn() / layout_.y)); }
  // Rotary positions turn this rank's query and key features, m x (heads + kv_heads) d / Gy, in
  // place: one read and one write each, forward and backward (the angles are a small table).
  double rope_elements() const {
    return as_double(m_) * as_double((model_.heads + model_.kv_head_count()) * head_dim() / layout_.y);
  }
  void rope(StepTask task, const char* phase) {
    if (model_.position != Position::rope) return;
    block_compute(task, phase, "rope", ComputeKind::attention, {}, 2.0 * rope_elements() * e_);
  }
  // Forward: GELU reads its input and writes the activation and the saved tanh; SwiGLU reads the
  // gate and the up value and writes the product (three passes each). Backward: GELU reads dy, the
  // input and the tanh and writes dx; SwiGLU reads dy, gate and up and writes both gradients.
  // Each has its own kernel rate (ElementwiseKernel::gelu_*, swiglu_*); both report as the gelu
  // compute kind.
  void activation_forward(const char* phase) {
    block_compute(StepTask::gelu_forward, phase, activation_name(), ComputeKind::gelu, {}, 3.0 * activation_elements() * e_);
    arithmetic(model_.activation == Activation::swiglu ? ElementwiseKernel::swiglu_forward
                                                       : ElementwiseKernel::gelu_forward,
               activation_elements());
  }
  void activation_backward() {
    const double passes = model_.activation == Activation::swiglu ? 5.0 : 4.0;
    block_compute(StepTask::gelu_backward, "bwd", activation_name(), ComputeKind::gelu, {},
                  passes * activation_elements() * e_);
    arithmetic(model_.activation == Activation::swiglu ? ElementwiseKernel::swiglu_backward
                                                       : ElementwiseKernel::gelu_backward,
               activation_elements());
  }
  const char* activation_name() const { return to_string(model_.activation); }

  // --- engine/model/block.cpp --------------------------------------------------------------------
  struct BlockPending {
    std::array<std::size_t, 4> gathers{kNoOp, kNoOp, kNoOp, kNoOp};
    std::array<std::size_t, 4> scatters{kNoOp, kNoOp, kNoOp, kNoOp};
  };

  // `recomputed`: the gathers serve the block's forward rerun in backward (OAG in backward).
  void block_start_gathers(int block, bool recomputed) {
    site_ = Site{block, -1, recomputed};
    const auto layers = block_layers(model_, layout_, block);
    for (int i = 0; i < 4; ++i) fc_start_gather(layers[i], pending_[block].gathers[i]);
  }

  void block_finish_gradients(int block) {
    site_ = Site{block, -1, false};
    const auto layers = block_layers(model_, layout_, block);
    for (int i = 0; i < 4; ++i) {
      std::size_t& scatter = pending_[block].scatters[static_cast<std::size_t>(i)];
      if (scatter == kNoOp) continue;
      at(layers[static_cast<std::size_t>(i)]);
      wait(scatter);
      fc_gradient_add(layers[static_cast<std::size_t>(i)]);
      scatter = kNoOp;
    }
  }

  void block_compute(StepTask task, const char* phase, const char* what, ComputeKind kind,
                     std::vector<GemmCall> gemms, double bytes) {
    site_.layer = -1;
    compute(task, phase_name(phase, what), kind, std::move(gemms), bytes);
  }

  void block_forward(const char* phase, int block, bool recomputed) {
    if (!recomputed) wait_param_gathers(block);
    site_ = Site{block, -1, recomputed};
    const auto fc = block_layers(model_, layout_, block);
    auto& gathers = pending_[block].gathers;
    norm_forward(phase, "ln1", 0, 0.0);
    fc_forward(phase, fc[0], gathers[0]);
    rope(StepTask::rope_forward, phase);
    block_compute(StepTask::attention_forward, phase, "attention", ComputeKind::attention, attention_forward_gemms(),
                  softmax_bytes(2));
    arithmetic(ElementwiseKernel::softmax_forward, softmax_elements());
    fc_forward(phase, fc[1], gathers[1]);
    norm_forward(phase, "ln2", 1, kResidualPasses);
    fc_forward(phase, fc[2], gathers[2]);
    activation_forward(phase);
    fc_forward(phase, fc[3], gathers[3]);
    block_compute(StepTask::residual_add, phase, "residual", ComputeKind::residual, {},
                  activation_bytes(kResidualPasses));
    site_ = Site{};
  }

  void block_backward(int block) {
    site_ = Site{block, -1, false};
    const auto fc = block_layers(model_, layout_, block);
    auto& scatters = pending_[block].scatters;
    // The residual passes the output gradient straight through: a copy before the MLP backward.
    untraced(StepTask::residual_copy, phase_name("bwd", "residual_copy"), activation_bytes(2));
    fc_backward(fc[3], scatters[3]);
    activation_backward();
    fc_backward(fc[2], scatters[2]);
    norm_backward("ln2", 1, 0.0);
    fc_backward(fc[1], scatters[1]);
    block_compute(StepTask::attention_backward, "bwd", "attention", ComputeKind::attention,
                  attention_backward_gemms(), softmax_bytes(3));
    arithmetic(ElementwiseKernel::softmax_backward, softmax_elements());
    rope(StepTask::rope_backward, "bwd");
    fc_backward(fc[0], scatters[0]);
    // The residual gradient is copied into dx before the layer-norm backward adds to it.
    norm_backward("ln1", 0, 2.0);
    site_ = Site{};
  }

  // --- engine/model/gpt.cpp ----------------------------------------------------------------------
  // A pipelined step's LM head (and embedding) is vocabulary-parallel over Y, as Megatron-LM's
  // (VocabParallelEmbedding, the column-parallel output layer and vocab_parallel_cross_entropy):
  // each Y rank holds V / Gy rows. The 4D step keeps every row on every Y rank, as the engine does.
  long long local_vocabulary() const {
    return layout_.vocabulary_parallel() ? model_.vocabulary / layout_.y : model_.vocabulary;
  }
  bool vocabulary_parallel() const { return layout_.vocabulary_parallel(); }
  long long logits_elements() const { return m_ * local_vocabulary(); }
  // The token embedding's row, the learned position's row (if any) and the written sum.
  double embedding_passes() const { return model_.position == Position::learned ? 3.0 : 2.0; }
  // The lookups cover every token of the micro-batch (with sequence parallelism the sum over Y then
  // scatters them into sequence shards, and backward gathers their gradient first).
  double embedding_bytes() const {
    return as_double(m_) * kTokenBytes + embedding_passes() * as_double(m_) * as_double(width_) * e_;
  }

  void gpt_forward(bool loss) {
    const int layers = model_.layers;
    wait_param_gathers(kLeadingBucket);
    compute(StepTask::embedding_forward, "fwd.embedding", ComputeKind::embedding, {}, embedding_bytes());
    if (vocabulary_parallel())
      blocking(StepTask::embedding_forward, sequence_parallel() ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce,
               CommGroup::y, elements_bytes(m_ * width_));
    if (options_.overlap_all_gather && layers > 0) block_start_gathers(0, false);
    for (int l = 0; l < layers; ++l) {
      if (options_.overlap_all_gather && l + 1 < layers) block_start_gathers(l + 1, false);
      block_forward("fwd", l, false);
    }
    head_forward(loss);
  }

  // The final norm, the LM head and (with `loss`) the cross entropy.
  void head_forward(bool loss) {
    wait_param_gathers(kTrailingBucket);
    if (model_.tied_embeddings) wait_param_gathers(kLeadingBucket);  // the LM head is the embedding
    site_ = Site{};
    norm_forward("fwd", "lnf", -1, 0.0);
    site_.layer = -1;
    if (sequence_parallel())
      blocking(StepTask::lm_head_gemm, CollectiveOp::all_gather, CommGroup::y, elements_bytes(m_ * width_));
    compute(StepTask::lm_head_gemm, "fwd.lm_head.gemm", ComputeKind::gemm, {{m_, local_vocabulary(), width_}}, 0);
    blocking(StepTask::lm_head_sum, CollectiveOp::all_reduce, CommGroup::x, elements_bytes(logits_elements()));
    if (!loss) return;
    if (!vocabulary_parallel()) {
      // Max, exponent sum and the target's logit: two passes over the logits.
      compute(StepTask::cross_entropy_forward, "fwd.cross_entropy", ComputeKind::cross_entropy, {},
              2.0 * as_double(logits_elements()) * e_);
      arithmetic(ElementwiseKernel::cross_entropy_forward, as_double(logits_elements()));
      return;
    }
    // Over a vocabulary split over Y (Megatron-LM's vocab_parallel_cross_entropy): the row maxima
    // (one pass), their maximum over Y, then the exponent sums and the target logits (a second
    // pass), each summed over Y: three all-reduces of m floats. The layer tells the sums apart:
    // 0 the maxima, 1 the target logits, 2 the exponent sums.
    compute(StepTask::cross_entropy_max, "fwd.cross_entropy.max", ComputeKind::cross_entropy, {},
            as_double(logits_elements()) * e_);
    blocking(StepTask::cross_entropy_max, CollectiveOp::all_reduce, CommGroup::y, kFloatBytes * as_bytes(m_));
    ops_.back().layer = 0;
    compute(StepTask::cross_entropy_forward, "fwd.cross_entropy", ComputeKind::cross_entropy, {},
            as_double(logits_elements()) * e_);
    arithmetic(ElementwiseKernel::cross_entropy_forward, as_double(logits_elements()));
    for (int sum = 1; sum <= 2; ++sum) {
      blocking(StepTask::cross_entropy_forward, CollectiveOp::all_reduce, CommGroup::y, kFloatBytes * as_bytes(m_));
      ops_.back().layer = sum;
    }
  }

  void gpt_backward() {
    const int layers = model_.layers;
    // OAG in backward (../shared/docs/4d-algorithm.md: "in forward and in backward"): with
    // recomputation each block's recompute all-gathers its weights over Z again; those gathers start
    // one block ahead, as in forward, the last block's during the LM head's backward. Without
    // recomputation backward uses the blocks forward gathered and kept, and gathers nothing.
    const bool prefetch = options_.overlap_all_gather && options_.recompute && layers > 0;
    if (prefetch) block_start_gathers(layers - 1, true);
    head_backward();
    for (int l = layers - 1; l >= 0; --l) {
      if (prefetch && l > 0) block_start_gathers(l - 1, true);
      if (options_.recompute) block_forward("recompute", l, true);
      block_backward(l);
      // ORS: the block after this one had its reduce-scatters in flight during this backward.
      if (l + 1 < layers) {
        block_finish_gradients(l + 1);
        if (overlap_data_parallel()) reduce_gradients(block_tensors(l + 1));
      }
    }
    site_ = Site{};
    embedding_backward();
    if (layers > 0) {
      block_finish_gradients(0);
      if (overlap_data_parallel()) reduce_gradients(block_tensors(0));
    }
    if (overlap_data_parallel()) {
      reduce_leading();  // wte (and wpe)
      reduce_gradients(trailing_range());  // lnf (and the LM head)
    }
  }

  TensorRange leading_range() const { return {0, leading_tensors(model_)}; }
  // The leading tensors' buckets. The distributed optimizer with stages and a tied embedding puts
  // the embedding in a bucket of its own, as Megatron-LM does (_does_param_require_new_bucket):
  // the first stage's copy and the last stage's then split into the same shards over the data
  // ranks, so that the two stages can sum their reduce-scattered shards.
  bool shared_embedding_bucket() const { return zero1() && layout_.pipeline > 1 && model_.tied_embeddings; }
  std::vector<TensorRange> leading_buckets() const {
    if (!shared_embedding_bucket()) return {leading_range()};
    return {{0, 1}, {1, leading_tensors(model_)}};
  }
  void reduce_leading() {
    for (const TensorRange& r : leading_buckets()) reduce_gradients(r);
  }
  TensorRange trailing_range() const { return {tensors_.size() - trailing_tensors(model_), tensors_.size()}; }

  // Reads the residual gradient, scatter-adds it into the embedding gradients.
  void embedding_backward() {
    if (sequence_parallel())
      blocking(StepTask::embedding_backward, CollectiveOp::all_gather, CommGroup::y, elements_bytes(m_ * width_));
    compute(StepTask::embedding_backward, "bwd.embedding", ComputeKind::embedding, {}, embedding_bytes());
  }

  // The loss's and LM head's backward down to the final norm's.
  void head_backward() {
    site_ = Site{};
    compute(StepTask::cross_entropy_backward, "bwd.cross_entropy", ComputeKind::cross_entropy, {},
            2.0 * as_double(logits_elements()) * e_);
    arithmetic(ElementwiseKernel::cross_entropy_backward, as_double(logits_elements()));
    compute(StepTask::lm_head_dx_gemm, "bwd.lm_head.dx_gemm", ComputeKind::gemm, {{m_, width_, local_vocabulary()}},
            0);
    // A column-parallel layer's input gradient is a partial sum over its vocabulary shards.
    if (vocabulary_parallel())
      blocking(StepTask::lm_head_dx_gemm,
               sequence_parallel() ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce, CommGroup::y,
               elements_bytes(m_ * width_));
    compute(StepTask::lm_head_dw_gemm, "bwd.lm_head.dw_gemm", ComputeKind::gemm, {{local_vocabulary(), width_, m_}},
            0);
    untraced(StepTask::residual_zero, "bwd.residual_zero", activation_bytes(1));
    norm_backward("lnf", -1, 0.0);
  }

  // --- engine/train/trainer.cpp ------------------------------------------------------------------
  bool overlap_data_parallel() const { return options_.overlap_data_parallel && !model_only_; }

  TensorRange block_tensors(int block) const {
    const auto per_block = static_cast<std::size_t>(tensors_per_block(model_));
    const std::size_t first = leading_tensors(model_) + per_block * static_cast<std::size_t>(block);
    return {first, first + per_block};
  }

  // One non-blocking all-reduce per group: the range's Z-sharded weights packed into one bucket
  // over data, the rest into one over data x Z (a group of one rank packs nothing).
  void reduce_gradients(TensorRange range) {
    site_ = Site{};
    // Sequence parallelism: each Y rank normalised its own tokens, so the norms' gradients are
    // partial sums over Y, completed (once per step, after the last micro-batch's backward) before
    // they join a bucket.
    if (sequence_parallel()) {
      long long norms = 0;
      for (std::size_t t = range.first; t < range.last; ++t)
        if (owned_[t] && tensors_[t].norm) norms += tensors_[t].elements;
      if (norms > 0) {
        blocking(StepTask::norm_gradient_sum, CollectiveOp::all_reduce, CommGroup::y, elements_bytes(norms));
        ops_.back().first_tensor = range.first, ops_.back().last_tensor = range.last;
      }
    }
    for (const CommGroup group : {CommGroup::data, CommGroup::data_z}) {
      if (group_size(layout_, group) == 1) continue;
      long long elements = 0;
      for (std::size_t t = range.first; t < range.last; ++t)
        if (owned_[t] && tensors_[t].z_sharded == (group == CommGroup::data)) elements += tensors_[t].elements;
      if (elements == 0) continue;
      untraced(StepTask::gradient_pack, label("dp.pack.", to_string(group)), 2.0 * as_double(elements) * e_);
      ops_.back().group = group;
      ops_.back().first_tensor = range.first, ops_.back().last_tensor = range.last;
      elements = zero_bucket(elements, group);
      data_parallel_.push_back(issue(StepTask::gradient_sum,
                                     zero1() ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce, group,
                                     elements_bytes(elements)));
      bucket_elements_[group == CommGroup::data ? 0 : 1] += elements;
      ops_.back().first_tensor = range.first, ops_.back().last_tensor = range.last;
      buckets_bytes_ += 2.0 * as_double(elements) * e_;
    }
  }

  void trainer_step() {
    const double parameter_bytes = as_double(parameters_) * e_;
    // Token shard (inputs and targets) and the zeroed gradient buffer.
    compute(StepTask::load_batch, "input.load_batch", ComputeKind::input, {},
            2.0 * as_double(m_) * kTokenBytes + parameter_bytes);
    start_param_gathers();
    gpt_forward(true);
    gpt_backward();
    if (!options_.overlap_data_parallel) reduce_gradients({0, tensors_.size()});
    // The loss sum and the number of supervised targets (the Goldfish mask's).
    blocking(StepTask::loss_sum, CollectiveOp::all_reduce, CommGroup::data_z, 2 * kScalarBytes);
    for (std::size_t issued : data_parallel_) wait(issued);
    if (buckets_bytes_ > 0) untraced(StepTask::gradient_unpack, "dp.unpack", buckets_bytes_);
    optimizer_step(parameter_bytes);
  }

  // The gradient norm and AdamW over the rank's parameters (ZeRO-1: over its 1 / Gdata shard of
  // them, whose updated values are then all-gathered over the data-parallel groups).
  void optimizer_step(double parameter_bytes) {
    while (!param_gathers_.empty()) wait_param_gathers(param_gathers_.begin()->first);  // none left unread
    const double shard = zero1() ? parameter_bytes / layout_.data : parameter_bytes;
    compute(StepTask::gradient_norm, "optimizer.grad_norm", ComputeKind::optimizer, {}, shard);
    for (CommGroup g : {CommGroup::x, CommGroup::y, CommGroup::z})
      blocking(StepTask::gradient_norm_sum, CollectiveOp::all_reduce, g, kScalarBytes);
    if (zero1()) blocking(StepTask::gradient_norm_sum, CollectiveOp::all_reduce, CommGroup::data, kScalarBytes);
    // Each stage holds its own blocks' gradients: the norm is summed over the stages too.
    if (layout_.pipeline > 1)
      blocking(StepTask::gradient_norm_sum, CollectiveOp::all_reduce, CommGroup::pipeline, kScalarBytes);
    // AdamW reads value, gradient, m, v and writes value, m, v.
    compute(StepTask::adamw, "optimizer.adamw", ComputeKind::optimizer, {}, 7.0 * shard);
    if (!zero1() || overlap_param_gather()) return;
    for (const CommGroup group : {CommGroup::data, CommGroup::data_z}) {
      const long long elements = bucket_elements_[group == CommGroup::data ? 0 : 1];
      if (elements > 0) blocking(StepTask::adamw, CollectiveOp::all_gather, group, elements_bytes(elements));
    }
  }

  // Megatron-LM's distributed optimizer (ZeRO-1): gradients reduce-scattered over the data-parallel
  // group, each rank updating its shard.
  bool zero1() const { return layout_.sharded_optimizer(); }
  // A bucket's elements as the distributed optimizer holds them: padded to a multiple of the
  // group's ranks, so that each holds an equal shard (Megatron-LM pads its buckets likewise).
  long long zero_bucket(long long elements, CommGroup group) const {
    if (!zero1()) return elements;
    const long long ranks = group_size(layout_, group);
    return (elements + ranks - 1) / ranks * ranks;
  }

  // Megatron-LM's --overlap-param-gather (with the distributed optimizer and the overlapped gradient
  // reduction): the parameters an update leaves sharded are all-gathered bucket by bucket during the
  // next step's forward, each bucket waited for before its first use. In one step's schedule: issued
  // at its start, for every bucket in the order forward uses them (the embedding, the blocks, the
  // final norm and head), each waited for before the first forward that reads it.
  static constexpr int kLeadingBucket = -1, kTrailingBucket = -2;
  bool overlap_param_gather() const { return zero1() && options_.overlap_data_parallel; }
  void start_param_gathers() {
    if (!overlap_param_gather()) return;
    auto gather = [&](int key, TensorRange range) {
      site_ = Site{};
      for (const CommGroup group : {CommGroup::data, CommGroup::data_z}) {
        if (group_size(layout_, group) == 1) continue;
        long long elements = 0;
        for (std::size_t t = range.first; t < range.last; ++t)
          if (owned_[t] && tensors_[t].z_sharded == (group == CommGroup::data)) elements += tensors_[t].elements;
        if (elements == 0) continue;
        param_gathers_[key].push_back(
            issue(StepTask::adamw, CollectiveOp::all_gather, group, elements_bytes(zero_bucket(elements, group))));
        ops_.back().first_tensor = range.first, ops_.back().last_tensor = range.last;
      }
    };
    for (const TensorRange& r : leading_buckets()) gather(kLeadingBucket, r);
    for (int b = 0; b < model_.layers; ++b) gather(b, block_tensors(b));
    gather(kTrailingBucket, trailing_range());
  }
  void wait_param_gathers(int key) {
    const auto it = param_gathers_.find(key);
    if (it == param_gathers_.end()) return;
    for (const std::size_t issued : it->second) wait(issued);
    param_gathers_.erase(it);
  }

  // --- a pipeline stage (megatron/core/pipeline_parallel/schedules.py) ---------------------------
  bool holds_first_chunk() const { return stage_ == 0; }
  bool holds_last_chunk() const { return stage_ == layout_.pipeline - 1; }

  // The tensors this stage updates: its chunks' blocks, the embedding (and positions) on the first
  // stage, the final norm and untied head on the last, and the tied embedding there too (Megatron-LM
  // keeps a copy for the LM head and sums the two gradients, exchange_embedding_gradients).
  void own_stage_tensors() {
    owned_.assign(tensors_.size(), false);
    auto own = [&](TensorRange r) { std::fill(owned_.begin() + static_cast<long>(r.first), owned_.begin() + static_cast<long>(r.last), true); };
    if (holds_first_chunk() || (holds_last_chunk() && model_.tied_embeddings)) {
      if (holds_first_chunk())
        own(leading_range());
      else
        own({0, 1});  // wte's copy alone
    }
    if (holds_last_chunk()) own(trailing_range());
    for (int c = 0; c < layout_.virtual_stages; ++c) {
      const int v = virtual_stage(layout_, stage_, c);
      const BlockRange blocks = chunk_blocks(layout_, model_.layers, v);
      for (int b = blocks.first; b < blocks.end; ++b) own(block_tensors(b));
    }
  }

  // Bytes of one micro-batch's activations or their gradients at a stage boundary: the residual
  // stream's shard, m x h/Gx, sent by every rank to its counterpart on the peer stage.
  std::uint64_t boundary_bytes() const { return elements_bytes(rows() * width_); }

  std::size_t transfer(StepOpKind kind, int peer, StageStream stream, std::uint64_t bytes) {
    StepOp op;
    op.kind = kind, op.task = kind == StepOpKind::send ? StepTask::stage_send : StepTask::stage_receive;
    op.name = label(kind == StepOpKind::send ? "send." : "recv.", to_string(stream));
    op.peer_stage = peer, op.stream = stream, op.bytes = bytes, op.blocking = false;
    push(std::move(op));
    return ops_.size() - 1;
  }

  // The receive of the action's input: activations from the previous virtual stage (forward) or
  // gradients from the next (backward).
  void post_input(const PipelineAction& a, std::vector<std::size_t>& posted) {
    const int v = virtual_stage(layout_, stage_, a.chunk), last = virtual_stages(layout_) - 1;
    action_ = {a.chunk, a.micro_batch};
    site_ = Site{};
    if (a.forward && v > 0)
      posted.push_back(transfer(StepOpKind::receive, (v - 1) % layout_.pipeline, StageStream::activations,
                                boundary_bytes()));
    if (!a.forward && v < last)
      posted.push_back(transfer(StepOpKind::receive, (v + 1) % layout_.pipeline, StageStream::gradients,
                                boundary_bytes()));
  }
  void post_output(const PipelineAction& a, std::vector<std::size_t>& posted) {
    const int v = virtual_stage(layout_, stage_, a.chunk), last = virtual_stages(layout_) - 1;
    action_ = {a.chunk, a.micro_batch};
    site_ = Site{};
    if (a.forward && v < last)
      posted.push_back(
          transfer(StepOpKind::send, (v + 1) % layout_.pipeline, StageStream::activations, boundary_bytes()));
    if (!a.forward && v > 0)
      posted.push_back(
          transfer(StepOpKind::send, (v - 1) % layout_.pipeline, StageStream::gradients, boundary_bytes()));
  }
  void wait_all(std::vector<std::size_t>& posted) {
    for (std::size_t issued : posted) wait(issued);
    posted.clear();
  }

  void run_action(const PipelineAction& a) {
    const int v = virtual_stage(layout_, stage_, a.chunk), last = virtual_stages(layout_) - 1;
    const BlockRange blocks = chunk_blocks(layout_, model_.layers, v);
    const int first_block = blocks.first, end_block = blocks.end;
    // The data-parallel buckets of a chunk go out during its last micro-batch's backward.
    const bool reduce = overlap_data_parallel() && !a.forward && a.micro_batch == layout_.micro_batches - 1;
    action_ = {a.chunk, a.micro_batch};
    site_ = Site{};
    if (a.forward) {
      if (v == 0) {
        wait_param_gathers(kLeadingBucket);
        compute(StepTask::embedding_forward, "fwd.embedding", ComputeKind::embedding, {}, embedding_bytes());
        // Each Y rank looks up the tokens of its vocabulary rows; the sum over Y completes them.
        if (vocabulary_parallel())
          blocking(StepTask::embedding_forward, sequence_parallel() ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce,
               CommGroup::y, elements_bytes(m_ * width_));
      }
      for (int l = first_block; l < end_block; ++l) block_forward("fwd", l, false);
      if (v == last) head_forward(true);
    } else {
      if (v == last) head_backward();
      for (int l = end_block - 1; l >= first_block; --l) {
        if (options_.recompute) block_forward("recompute", l, true);
        block_backward(l);
        if (reduce) reduce_gradients(block_tensors(l));
      }
      site_ = Site{};
      if (v == 0) embedding_backward();
      if (reduce && v == last) reduce_gradients(trailing_range());
      // The embedding's gradient is complete on the first stage after its backward, and the last
      // stage's copy after the LM head's.
      if (reduce && (v == 0 || (v == last && stage_ != 0))) reduce_leading();
    }
    action_ = {};
  }

  // Megatron-LM's forward_backward_pipelining_without_interleaving: each pass's output goes out
  // with the next pass's input coming in (send_forward_recv_backward and kin), waited for before
  // the next pass.
  void one_f_one_b_passes(std::vector<std::size_t>& posted) {
    const std::vector<PipelineAction> actions = pipeline_actions(layout_, stage_);
    if (!actions.empty()) post_input(actions.front(), posted);
    wait_all(posted);
    for (std::size_t i = 0; i < actions.size(); ++i) {
      run_action(actions[i]);
      post_output(actions[i], posted);
      if (i + 1 < actions.size()) post_input(actions[i + 1], posted);
      wait_all(posted);
    }
  }

  // Megatron-LM's forward_backward_pipelining_with_interleaving: warm-up forwards one at a time,
  // then a forward and a backward per iteration, then the backwards; after each, one batched
  // exchange sends its outputs and receives the next forward's input and the next backward's
  // (send_forward_backward_recv_forward_backward); the first backward's input comes with the last
  // warm-up forward's exchange.
  void interleaved_passes(std::vector<std::size_t>& posted) {
    const std::vector<PipelineAction> actions = pipeline_actions(layout_, stage_);
    std::vector<PipelineAction> forwards, backwards;
    for (const PipelineAction& a : actions) (a.forward ? forwards : backwards).push_back(a);
    const std::size_t warmup = static_cast<std::size_t>(warmup_forwards(layout_, stage_));
    std::size_t next_forward = 0, next_backward = 0;  // the passes whose inputs are not yet posted
    auto receive_forward = [&] {
      if (next_forward < forwards.size()) post_input(forwards[next_forward++], posted);
    };
    auto receive_backward = [&] {
      if (next_backward < backwards.size()) post_input(backwards[next_backward++], posted);
    };
    receive_forward();
    if (warmup == 0) receive_backward();
    wait_all(posted);
    std::size_t f = 0, b = 0;
    while (f < forwards.size() || b < backwards.size()) {
      const bool run_forward = f < forwards.size();
      const bool run_backward = b < backwards.size() && f >= warmup;
      if (run_forward) run_action(forwards[f]);
      if (run_backward) run_action(backwards[b]);
      if (run_forward) post_output(forwards[f++], posted);
      if (run_backward) post_output(backwards[b++], posted);
      receive_forward();
      if (f >= warmup) receive_backward();
      wait_all(posted);
    }
  }

  void pipeline_step() {
    const double parameter_bytes = as_double(parameters_) * e_;
    const bool tokens = holds_first_chunk() || holds_last_chunk();
    compute(StepTask::load_batch, "input.load_batch", ComputeKind::input, {},
            (tokens ? 2.0 * as_double(m_ * layout_.micro_batches) * kTokenBytes : 0.0) + parameter_bytes);
    start_param_gathers();
    std::vector<std::size_t> posted;
    if (layout_.virtual_stages == 1)
      one_f_one_b_passes(posted);
    else
      interleaved_passes(posted);
    site_ = Site{};
    if (!options_.overlap_data_parallel) {
      const std::size_t rest = shared_embedding_bucket() ? 1 : 0;  // after the embedding's own bucket
      if (rest > 0) reduce_gradients({0, rest});
      reduce_gradients({rest, tensors_.size()});
    }
    // The loss sum (the last stage's) and the supervised targets, by which every stage scales its
    // gradients (the Goldfish mask's share; engine/train/trainer.cpp).
    blocking(StepTask::loss_sum, CollectiveOp::all_reduce, CommGroup::data_z, 2 * kScalarBytes);
    for (std::size_t issued : data_parallel_) wait(issued);
    if (buckets_bytes_ > 0) untraced(StepTask::gradient_unpack, "dp.unpack", buckets_bytes_);
    if (model_.tied_embeddings && layout_.pipeline > 1 && (holds_first_chunk() || holds_last_chunk())) {
      const int peer = holds_first_chunk() ? layout_.pipeline - 1 : 0;
      // The whole gradient, or (distributed optimizer) the rank's reduce-scattered shard of the
      // embedding's own bucket: the same rows on both stages, and all the update reads. Megatron-LM
      // all-reduces the whole main_grad there; only its shard is used.
      long long elements = tensors_.front().elements;
      if (shared_embedding_bucket() && group_size(layout_, CommGroup::data_z) > 1)
        elements = zero_bucket(elements, CommGroup::data_z) / group_size(layout_, CommGroup::data_z);
      const std::uint64_t bytes = elements_bytes(elements);
      posted.push_back(transfer(StepOpKind::send, peer, StageStream::embedding_gradients, bytes));
      posted.push_back(transfer(StepOpKind::receive, peer, StageStream::embedding_gradients, bytes));
      wait_all(posted);
      untraced(StepTask::embedding_gradient_add, "optimizer.embedding_grad_add", 3.0 * as_double(elements) * e_);
    }
    optimizer_step(parameter_bytes);
  }

  struct Action {
    int chunk = -1, micro_batch = -1;
  };

  const ModelSpec& model_;
  const Layout& layout_;
  const StepScheduleOptions& options_;
  bool names_ = true;
  std::vector<RankTensor> tensors_;
  int stage_ = 0;
  std::vector<bool> owned_;  // per tensor: updated by this stage
  Action action_;
  long long sequences_total_ = 0;
  long long sequences_ = 0, m_ = 0, width_ = 0, parameters_ = 0;
  int e_ = 4;
  bool model_only_ = false;  // a ModelPass: no data-parallel buckets
  Site site_;
  std::vector<StepOp> ops_;
  std::vector<BlockPending> pending_;
  std::vector<std::size_t> data_parallel_;
  double buckets_bytes_ = 0;  // what unpacking the buckets reads and writes
  std::array<long long, 2> bucket_elements_{};  // gradients summed over data, and over data x Z
  std::map<int, std::vector<std::size_t>> param_gathers_;  // per bucket (block, or leading / trailing)
};

}  // namespace

std::vector<RankTensor> rank_tensors(const ModelSpec& model, const Layout& layout) {
  const long long h = model.hidden, width = h / layout.x;
  const bool beta = model.norm == NormKind::layernorm;
  // Split over Y where the layout asks for it (Layout::vocabulary_parallel).
  const long long vocabulary = layout.vocabulary_parallel() ? model.vocabulary / layout.y : model.vocabulary;
  std::vector<RankTensor> tensors{{"wte", vocabulary * width, false}};
  if (model.position == Position::learned) tensors.push_back({"wpe", model.sequence_length * width, false});
  for (int l = 0; l < model.layers; ++l) {
    const std::string p = block_prefix(l);
    for (const char* norm : {"ln1", "ln2"}) {
      tensors.push_back({p + norm + ".gamma", width, false, true});
      if (beta) tensors.push_back({p + norm + ".beta", width, false, true});
    }
    for (const FcShape& fc : block_layers(model, layout, l)) {
      const std::string name = fc_name(fc);
      tensors.push_back({name + ".weight", fc.k_local * fc.n_local / layout.z, true});
      if (model.biases) tensors.push_back({name + ".bias", fc.n_local, false});
    }
  }
  tensors.push_back({"lnf.gamma", width, false, true});
  if (beta) tensors.push_back({"lnf.beta", width, false, true});
  // An untied LM head is its own V x h weight, split as the tied one is used: h over X.
  if (!model.tied_embeddings) tensors.push_back({"lm_head", vocabulary * width, false});
  return tensors;
}

StepSchedule make_step_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                const StepScheduleOptions& options, OpNames names) {
  assert(layout.data > 0 && layout.z > 0 &&
         sequences_global % (static_cast<long long>(layout.data) * layout.z) == 0);
  return ScheduleBuilder(model, layout, sequences_global, options, names).step();
}

StepSchedule make_stage_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                 int stage, const StepScheduleOptions& options, OpNames names) {
  assert(layout.pipelined() && layout.z == 1 && stage >= 0 && stage < layout.pipeline &&
         sequences_global % (static_cast<long long>(layout.data) * layout.micro_batches) == 0 &&
         model.layers >= layout.pipeline * layout.virtual_stages);
  return ScheduleBuilder(model, layout, sequences_global, options, names, stage).step();
}

StepSchedule make_model_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                 ModelPass pass, const StepScheduleOptions& options) {
  assert(layout.data > 0 && layout.z > 0 &&
         sequences_global % (static_cast<long long>(layout.data) * layout.z) == 0);
  return ScheduleBuilder(model, layout, sequences_global, options, OpNames::trace).pass(pass);
}

}  // namespace ws
