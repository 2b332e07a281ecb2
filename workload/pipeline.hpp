// The order of one pipeline stage's forward and backward passes over its micro-batches, as
// Megatron-LM's schedules run them (megatron/core/pipeline_parallel/schedules.py):
//  - 1F1B (PipeDream-Flush): stage s runs min(pp - s - 1, mb) warm-up forwards, then alternates one
//    forward and one backward, then runs the remaining backwards;
//  - interleaved (vpp model chunks per stage, mb a multiple of pp): forward k runs chunk
//    (k / pp) mod vpp on micro-batch (k / (pp vpp)) pp + k mod pp, backward k the chunks in reverse;
//    (pp - s - 1) x 2 + (vpp - 1) x pp warm-up forwards, then 1F1B, then the rest.
// Virtual stage v = chunk x pp + s holds blocks [v L / (pp vpp), (v + 1) L / (pp vpp)); a forward on v
// takes its input from v - 1 and sends its output to v + 1, a backward the other way round.
#pragma once

#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "workload/model.hpp"

namespace ws {

struct PipelineAction {
  bool forward = true;
  int chunk = 0;        // model chunk on this stage (0 with 1F1B)
  int micro_batch = 0;
  friend bool operator==(const PipelineAction&, const PipelineAction&) = default;
};

// Every forward and backward of `stage` in execution order: 2 x mb x vpp actions. The layout must
// satisfy pipeline_problem.
std::vector<PipelineAction> pipeline_actions(const Layout& layout, int stage);

// Forwards the stage runs before its first backward.
int warmup_forwards(const Layout& layout, int stage);

// The blocks [first, end) of virtual stage v: L / (pp vpp) each, the first L mod (pp vpp) one more
// (DeepSpeed's partition_uniform; Megatron-LM's even split where it divides).
struct BlockRange {
  int first = 0, end = 0;
};
BlockRange chunk_blocks(const Layout& layout, int layers, int virtual_stage);

// The virtual stage of `chunk` on `stage`, and how many there are.
inline int virtual_stage(const Layout& layout, int stage, int chunk) { return chunk * layout.pipeline + stage; }
inline int virtual_stages(const Layout& layout) { return layout.pipeline * layout.virtual_stages; }

// Why the layout's pipeline (stages, chunks, micro-batches), ZeRO stage or sequence parallelism
// cannot run `model` with `batch`, or empty: at least one block per model chunk (uneven splits give
// the first chunks one more), the interleaved schedule's micro-batches in groups of pp, no Z sharding
// with stages, the batch in whole micro-batches. The one check of the engine (validate_run) and the
// simulator (layout_problem).
std::string pipeline_problem(const ModelSpec& model, const Batch& batch, const Layout& layout);

}  // namespace ws
