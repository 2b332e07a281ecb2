// The ops of one training step of one rank, in order: compute phases with their GEMM shapes and
// the bytes they move, and every collective with its group, payload and, for non-blocking ones,
// where it is waited for. It is the step's single source of truth: the engine executes it (each
// op's `task` names the model or trainer code that runs it, engine/model/schedule_runner.hpp) and
// the simulator (sim/step/) prices it on a modelled machine. A test checks that the engine's
// trace is this list (tests/engine/step/step_schedule_drift_test.cpp). No MPI, no BLAS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/units.hpp"
#include "workload/collective_op.hpp"
#include "workload/comm_group.hpp"
#include "workload/elementwise_kernel.hpp"
#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "workload/precision.hpp"

namespace ws {


// What a compute phase is, for per-phase breakdowns.
enum class ComputeKind {
  input,
  embedding,
  layer_norm,
  gemm,
  attention,
  gelu,
  residual,
  bias_grad,
  cross_entropy,
  optimizer,
  untraced
};
inline constexpr int kComputeKinds = static_cast<int>(ComputeKind::untraced) + 1;
const char* to_string(ComputeKind kind);  // "input", "embedding", "layer_norm", "gemm", ..., "untraced"

// C[m x n] = A[m x k] B[k x n], `count` times (attention runs one per local sequence and head).
struct GemmCall {
  long long m = 0, n = 0, k = 0;
  long long count = 1;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(count);
  }
  friend bool operator==(const GemmCall&, const GemmCall&) = default;
};

// send and receive: a point-to-point transfer between pipeline stages, non-blocking, with a wait
// (as Megatron-LM's batched isend / irecv). Each pairs with the peer stage's receive or send: the
// k-th send on (from, to, stream) with the k-th receive there.
enum class StepOpKind { compute, collective, wait, send, receive };

// What a point-to-point transfer between stages carries: a micro-batch's activations (forward),
// their gradients (backward), or the tied embedding's gradient between the first and last stage.
enum class StageStream : std::uint8_t { activations, gradients, embedding_gradients };
const char* to_string(StageStream stream);  // "activations", "gradients", "embedding_gradients"

// The work an op stands for, which the engine dispatches on. Layer norms run in stages around
// their sums over X (engine/kernels/layer_norm.hpp); FC layers are split into their GEMMs, sums
// and gradient steps (engine/model/fc_layer.hpp). A collective's wait carries its task.
enum class StepTask : std::uint8_t {
  load_batch,  // the token shard, the Goldfish mask, the zeroed gradients
  embedding_forward,
  embedding_backward,
  norm_row_sums,      // forward stage 1 (ln2's also adds the attention residual first; RMSNorm: squares)
  norm_mean_sum,      // all-reduce X of the row sums (LayerNorm)
  norm_deviations,    // forward stage 2 (LayerNorm)
  norm_variance_sum,  // all-reduce X of the squared deviations (RMSNorm: of the squares)
  norm_normalize,     // forward stage 3 (RMSNorm: 2)
  norm_backward_sums,
  norm_backward_sum,  // all-reduce X of the backward row sums
  norm_backward_dx,
  weight_gather,  // all-gather Z of an FC weight block (blocking, or issued ahead: OAG)
  fc_forward_gemm,
  fc_forward_sum,  // all-reduce of the partial output over the layer's in-group
  fc_bias_add,
  fc_dx_gemm,
  fc_dx_sum,  // all-reduce of dX over the layer's out-group (non-blocking with OAR)
  fc_dw_gemm,
  fc_dw_scatter,  // reduce-scatter Z of the block's dW (non-blocking with ORS)
  fc_gradient_add,  // the reduce-scattered dW shard added to the gradient
  fc_bias_grad,
  attention_forward,
  attention_backward,
  gelu_forward,   // the MLP activation: GELU, or SwiGLU's silu(gate) * up
  gelu_backward,
  rope_forward,   // rotary positions turn Q and K (Llama family)
  rope_backward,  // and turn their gradients back
  residual_add,   // block output = MLP output + the attention residual
  residual_copy,  // backward: the residual passes the output gradient through
  lm_head_gemm,
  lm_head_sum,  // all-reduce X of the partial logits
  cross_entropy_max,  // vocabulary-parallel: the row maxima of this rank's logits (and their maximum over Y)
  cross_entropy_forward,
  cross_entropy_backward,
  lm_head_dx_gemm,
  lm_head_dw_gemm,
  residual_zero,     // the residual gradient starts at zero
  gradient_pack,     // a data-parallel bucket: the range's gradients packed
  gradient_sum,      // its all-reduce over data or data x Z
  gradient_unpack,   // every bucket's sums copied back
  loss_sum,          // all-reduce data x Z of the loss and the supervised targets (doubles)
  gradient_norm,     // the local share of the squared gradient norm
  gradient_norm_sum, // its all-reduce over X, Y and Z (a double)
  adamw,
  stage_send,             // a pipeline transfer to the peer stage (StepOp::peer_stage, stream)
  stage_receive,          // and from it
  embedding_gradient_add,  // the last stage's tied-embedding gradient added to the first's, and back
  norm_gradient_sum        // sequence parallelism: the norms' gain and bias gradients all-reduced over Y
};

inline constexpr std::size_t kNoOp = std::numeric_limits<std::size_t>::max();

struct StepOp {
  StepOpKind kind = StepOpKind::compute;
  // The engine's trace event name: "fwd.block3.qkv.gemm", "allreduce.x", "wait.allreduce.data";
  // empty in a schedule built with OpNames::none.
  std::string name;
  // compute: the GEMMs it runs and the bytes its element-wise work reads and writes (an estimate
  // of the kernel's passes over memory, see step_schedule.cpp).
  ComputeKind compute = ComputeKind::gemm;
  std::vector<GemmCall> gemms;
  Bytes memory_bytes = 0;
  // The element-wise kernel whose per-element arithmetic the op runs, and over how many elements
  // (a machine's ElementwiseThroughput prices it when that is slower than the memory traffic).
  std::optional<ElementwiseKernel> kernel;
  double elements = 0;
  // False for element-wise work the engine does between its timed spans (bias add after a forward
  // all-reduce, gradient copies): real step time, but no event in the engine's trace.
  bool traced = true;
  // collective and wait: payload bytes per rank as the engine records them (the gathered output
  // of an all-gather, the unreduced input of a reduce-scatter, the buffer of an all-reduce).
  CollectiveOp collective = CollectiveOp::all_reduce;
  CommGroup group = CommGroup::x;
  Bytes bytes = 0;
  bool blocking = true;
  // A non-blocking collective names its wait and the wait names its collective.
  std::size_t partner = kNoOp;
  // Where the engine runs it: the task, the transformer block (-1: outside the blocks), the layer
  // within the block (FC layers 0 qkv, 1 proj, 2 up, 3 down; layer norms 0 ln1, 1 ln2; -1 else),
  // whether it belongs to a block forward rerun in backward (--recompute), and for gradient
  // buckets (and the distributed optimizer's parameter all-gathers issued ahead of forward) the
  // range [first_tensor, last_tensor) of rank_tensors() they pack.
  StepTask task = StepTask::load_batch;
  int block = -1;
  int layer = -1;
  bool recomputed = false;
  std::size_t first_tensor = 0, last_tensor = 0;
  // send and receive: the other stage, the stream, and the pipeline action (model chunk,
  // micro-batch) the compute ops of a pipelined step belong to (-1 outside them).
  int peer_stage = -1;
  StageStream stream = StageStream::activations;
  int chunk = -1, micro_batch = -1;
  friend bool operator==(const StepOp&, const StepOp&) = default;
};

// The engine's switches that change what a step does (weakscale-engine flags).
// The switches of one step that change its ops: precision (bytes moved), recomputation, and the
// overlap schemes of ../shared/docs/4d-algorithm.md. Defaults are the engine's; the simulator's
// StepOptions (sim/step/step_options.hpp) extends them with the machine-side switches.
struct StepScheduleOptions {
  Precision precision = Precision::fp32;  // the engine trains in fp32
  bool recompute = false;                 // --recompute
  bool overlap_all_reduce = true;         // OAR: Y all-reduce of dX overlaps the dW GEMM
  bool overlap_reduce_scatter = true;     // ORS: Z reduce-scatter of dW overlaps earlier layers' backward
  bool overlap_all_gather = true;         // OAG: Z all-gather of the next layer's weights prefetched
  bool overlap_data_parallel = true;      // data-parallel all-reduce bucketed into backward (--no-overlap-dp)
  // dW = x^T dy in this many row tiles on more than one rank: the engine tests its MPI requests
  // between tiles (engine/model/fc_layer.cpp), which is how host-progressed collectives move.
  // A collective library that progresses on its own (GPUs) needs none: 1, one GEMM.
  int weight_gradient_tiles = 4;
  int bytes_per_element() const { return element_bytes(precision); }
  friend bool operator==(const StepScheduleOptions&, const StepScheduleOptions&) = default;
};
// OAR, ORS, OAG and the data-parallel overlap all on.
inline bool all_overlaps_on(const StepScheduleOptions& o) {
  return o.overlap_all_reduce && o.overlap_reduce_scatter && o.overlap_all_gather && o.overlap_data_parallel;
}

struct StepSchedule {
  ModelSpec model;
  Layout layout;
  long long sequences_per_rank = 0;  // sequences / (Gdata * Gz), over all micro-batches
  Precision precision = Precision::fp32;  // what an element of the ops' payloads is
  std::vector<StepOp> ops;
  int stage = 0;  // the pipeline stage whose ranks run these ops
};

// Whether the ops carry their trace names (StepOp::name): the engine and traces need them; a
// schedule that is only priced does not, and builds in about two thirds of the time without them.
enum class OpNames { trace, none };

// One rank's step. Every rank of a 4D layout runs the same ops with the same sizes, so one list
// describes them all. The layout must divide the model and batch (validate_run's rules). Either
// model family: the Llama family's ops differ in the QKV and MLP widths, RMSNorm's single sum, the
// rotary turns around attention, and no biases (ComputeKind keeps its names: SwiGLU reports as
// gelu, the rotary turns as attention).
StepSchedule make_step_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                const StepScheduleOptions& options = {}, OpNames names = OpNames::trace);

// One pipeline stage's step (layout.pipelined(); any layout, where stage 0 of a layout that is not
// pipelined is make_step_schedule's): for each action of pipeline_actions in order, the forward or
// backward of its model chunk on one micro-batch (sequences / (Gdata mb) sequences; the first virtual
// stage embeds, the last runs the final norm, LM head and loss), with the receives of its input
// posted before it and the sends of its output after it together with the next action's receives,
// then waited for (Megatron-LM's send_forward_recv_backward and kin). Data-parallel gradient
// buckets go out during the last micro-batch's backward of each block (or after every action
// without the data-parallel overlap); the tied embedding's gradient is exchanged between the first
// and the last stage after them; the last stage sums the loss. The layout must satisfy
// pipeline_problem; Gz = 1.
StepSchedule make_stage_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                 int stage, const StepScheduleOptions& options = {},
                                 OpNames names = OpNames::trace);

// The model's part of the step on its own: what Gpt::forward (to the loss), Gpt::forward_logits
// (to the summed logits) and Gpt::backward run, with the same ops as the whole step's (no batch,
// no data-parallel sums, no optimizer).
enum class ModelPass { forward, logits, backward };
StepSchedule make_model_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                 ModelPass pass, const StepScheduleOptions& options = {});

// One parameter tensor of a rank, in the engine's registration order (wte, wpe, the blocks, lnf;
// no wpe with rotary positions, no betas with RMSNorm, no biases without them, lm_head last when
// the embeddings are untied):
// the data-parallel gradient all-reduces follow this order.
struct RankTensor {
  std::string name;
  long long elements = 0;
  bool z_sharded = false;  // FC weights: all-reduced over data; the rest over data x Z
  // A norm's gain or bias: with sequence parallelism each Y rank normalises its own tokens, so its
  // gradient is a partial sum over Y (Megatron-LM all-reduces these over the tensor-parallel group).
  bool norm = false;
};
std::vector<RankTensor> rank_tensors(const ModelSpec& model, const Layout& layout);

}  // namespace ws
