// The ops of one training step of one rank, in the order the engine runs them (engine/model/
// {gpt,block,fc_layer}.cpp, engine/train/trainer.cpp): compute phases with their GEMM shapes and
// the bytes they move, and every collective with its group, payload and, for non-blocking ones,
// where it is waited for. The engine's trace names are reproduced exactly, and a drift test
// (tests/engine/parallel/step_schedule_drift_test.cpp) checks the engine's trace against this list;
// the simulator (sim/step/) executes it on a modelled machine. No MPI, no BLAS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/schedule/collective_op.hpp"
#include "engine/schedule/comm_group.hpp"
#include "engine/schedule/elementwise_kernel.hpp"
#include "engine/schedule/layout.hpp"
#include "engine/schedule/model.hpp"
#include "engine/schedule/precision.hpp"

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

enum class StepOpKind { compute, collective, wait };

inline constexpr std::size_t kNoOp = std::numeric_limits<std::size_t>::max();

struct StepOp {
  StepOpKind kind = StepOpKind::compute;
  // The engine's trace event name: "fwd.block3.qkv.gemm", "allreduce.x", "wait.allreduce.data".
  std::string name;
  // compute: the GEMMs it runs and the bytes its element-wise work reads and writes (an estimate
  // of the kernel's passes over memory, see step_schedule.cpp).
  ComputeKind compute = ComputeKind::gemm;
  std::vector<GemmCall> gemms;
  double memory_bytes = 0;
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
  std::uint64_t bytes = 0;
  bool blocking = true;
  // A non-blocking collective names its wait and the wait names its collective.
  std::size_t partner = kNoOp;
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
  int bytes_per_element() const { return element_bytes(precision); }
};

struct StepSchedule {
  ModelSpec model;
  Layout layout;
  long long sequences_per_rank = 0;  // sequences / (Gdata * Gz)
  std::vector<StepOp> ops;
};

// One rank's step. Every rank of a 4D layout runs the same ops with the same sizes, so one list
// describes them all. The layout must divide the model and batch (validate_run's rules).
StepSchedule make_step_schedule(const ModelSpec& model, const Layout& layout, long long sequences_global,
                                const StepScheduleOptions& options = {});

// One parameter tensor of a rank, in the engine's registration order (wte, wpe, the blocks, lnf):
// the data-parallel gradient all-reduces follow this order.
struct RankTensor {
  std::string name;
  long long elements = 0;
  bool z_sharded = false;  // FC weights: all-reduced over data; the rest over data x Z
};
std::vector<RankTensor> rank_tensors(const ModelSpec& model, const Layout& layout);

}  // namespace ws
