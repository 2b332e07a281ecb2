// The 4D layout Gdata x Gx x Gy x Gz and rank coordinates (X fastest, then Y, Z, data), as in
// ../shared/docs/4d-algorithm.md, and pipeline stages around it: `pipeline` copies of the 4D grid,
// each running a contiguous range of the model's blocks, outermost in rank order by default (as
// Megatron-LM's default order "tp-cp-ep-dp-pp", DeepSpeed's topology axes [pipe, data, model] and
// torchtitan's mesh [pp, dp_replicate, dp_shard, cp, tp] put them: stage s holds ranks
// [s x stage_devices, (s+1) x stage_devices)), or between the tensor-parallel and the data ranks
// (Megatron-LM's --use-tp-pp-dp-mapping, RankOrder::stages_inside_data). Shared by the engine
// (communicator split) and the simulator (placement of groups on the machine).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ws {

// How a pipeline orders its micro-batches' forward and backward passes (workload/pipeline.hpp):
// one-forward-one-backward (PipeDream-Flush / Megatron-LM's default), or Megatron-LM's interleaved
// schedule over `virtual_stages` model chunks per stage.
enum class PipelineSchedule { one_f_one_b, interleaved };

// How a layout is spoken of, and the parts of the step that differ with it. Each strategy is a
// shape of the same grid:
//  - four_d: Gdata x Gx x Gy x Gz, "64x2x2x2" (../shared/docs/4d-algorithm.md);
//  - megatron: Megatron-LM's tensor x pipeline x data parallelism, "tp=8,pp=4,dp=16,mb=32[,vpp=2]":
//    tensor parallelism is Gy (column-parallel QKV and MLP up, row-parallel projections: the 4D
//    algorithm with Gx = 1), data parallelism Gdata, with a vocabulary-parallel LM head over tp;
//  - fsdp: FSDP / HSDP (torchtitan's meshes), "dp_shard=64,dp_replicate=2[,tp=4]": weights sharded
//    over dp_shard (Gz: gathered per layer, gradients reduce-scattered), replicated over
//    dp_replicate (Gdata), tensor parallel over tp (Gy) with a vocabulary-parallel LM head.
// Megatron-LM's spelling takes "sp" for sequence parallelism: "tp=8,pp=4,dp=16,mb=32,sp".
enum class Strategy { four_d, megatron, fsdp };

// Where the pipeline stages sit in rank order: outermost (every framework's default: a stage's ranks
// are contiguous, data-parallel peers nearer than pipeline peers) or inside the data ranks
// (Megatron-LM's --use-tp-pp-dp-mapping, "order=tp-pp-dp": a replica's stages are contiguous, so
// stage transfers stay nearer and data-parallel groups spread wider). Only Megatron-LM offers the
// choice; it matters only with both pp > 1 and dp > 1.
enum class RankOrder { stages_outermost, stages_inside_data };
const char* to_string(Strategy strategy);  // "4d", "megatron", "fsdp"

struct Layout {
  int data = 1;
  int x = 1;
  int y = 1;
  int z = 1;
  // Pipeline parallelism: stages (pp), model chunks per stage (vpp; more than 1 is the interleaved
  // schedule) and micro-batches per step of each data-parallel replica (gradient accumulation; at
  // least 1). pp = vpp = micro_batches = 1 is the plain 4D step.
  int pipeline = 1;
  int virtual_stages = 1;
  int micro_batches = 1;
  Strategy strategy = Strategy::four_d;
  // Megatron-LM's sequence parallelism over tp (Gy): norms, residuals and stage transfers on S / tp
  // of the tokens; the row-parallel all-reduces become reduce-scatters and the column-parallel
  // layers all-gather their input (Korthikanti et al., MLSys 2023).
  bool sequence_parallel = false;
  // ZeRO over the data-parallel ranks, in Megatron-LM's spelling ("zero=1", "zero=2", "zero=3"):
  //  1: Megatron-LM's distributed optimizer: optimizer state and its update sharded over the data
  //     group, gradients reduce-scattered and the updated parameters all-gathered;
  //  2: DeepSpeed's ZeRO-2: the same collectives, and each rank keeps only its shard of the
  //     gradients (memory);
  //  3: ZeRO-3: the parameters sharded over the data ranks too, gathered for each layer's forward
  //     and backward and their gradients reduce-scattered: the data ranks are the grid's Z (as
  //     FSDP's dp_shard), so `data` is 1 and `z` is dp.
  int zero_stage = 0;
  RankOrder order = RankOrder::stages_outermost;

  int stage_devices() const { return data * x * y * z; }
  // Rank distance between neighbouring stages, and between neighbouring data ranks.
  int stage_stride() const { return order == RankOrder::stages_inside_data ? x * y * z : stage_devices(); }
  int data_stride() const { return order == RankOrder::stages_inside_data ? x * y * z * pipeline : x * y * z; }
  int devices() const { return stage_devices() * pipeline; }
  int tensor_parallel() const { return x * y * z; }
  bool pipelined() const { return pipeline > 1 || micro_batches > 1; }
  // The LM head and embedding split the vocabulary over Y (Megatron-LM's and torchtitan's), where a
  // framework's layout or stages ask for it; the 4D step keeps every row on every Y rank.
  bool vocabulary_parallel() const { return y > 1 && (pipelined() || strategy != Strategy::four_d); }
  PipelineSchedule schedule() const {
    return virtual_stages > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  }
  // ZeRO-1 and ZeRO-2 over more than one data rank: the optimizer state sharded over Gdata, the
  // gradient buckets reduce-scattered and the parameters all-gathered.
  bool sharded_optimizer() const { return (zero_stage == 1 || zero_stage == 2) && data > 1; }
  // Megatron-LM's data-parallel size: Gdata, or Gz under ZeRO-3.
  int data_parallel() const { return data * z; }
  friend bool operator==(const Layout&, const Layout&) = default;
};

// Megatron-LM's tp x pp x dp (with vpp chunks, mb micro-batches, a ZeRO stage, sequence
// parallelism and a rank order) on the grid: tp is Gy, dp is Gdata, or Gz under ZeRO-3
// (Layout::zero_stage). The rank order is kept only where it changes a rank (pp > 1 and dp > 1), so
// equal jobs are equal layouts.
Layout megatron_layout(int tp, int pp, int vpp, int dp, int mb, int zero_stage, bool sequence_parallel,
                       RankOrder order = RankOrder::stages_outermost);

struct RankCoords {
  int x = 0, y = 0, z = 0, data = 0;
  int stage = 0;  // pipeline stage
  friend bool operator==(const RankCoords&, const RankCoords&) = default;
};

// Of a rank of the whole job: its place in its stage's 4D grid, and its stage.
RankCoords coords_of(const Layout& layout, int rank);
int rank_of(const Layout& layout, const RankCoords& c);

// In the layout's strategy's words: "64x2x2x2" (Gdata x Gx x Gy x Gz; a pipelined 4D layout adds its
// stages, chunks and micro-batches: "8x1x4x1/pp=4,vpp=2,mb=16"), "tp=4,pp=4,vpp=2,dp=8,mb=16"
// (with ",zero=1", ",sp", ",order=tp-pp-dp" where they apply), "dp_shard=64,dp_replicate=2,tp=4".
std::string to_string(const Layout& layout);
// Whether the layout's parts multiply to `devices` (at most INT_MAX), for any layout parse_layout
// gives: unlike devices(), it cannot overflow on a product of large parts.
bool holds_devices(const Layout& layout, long long devices);
// The inverse of to_string, for every strategy's spelling. Megatron-LM's: keys tp, pp, vpp, dp, mb
// (dp required; the others default to 1); FSDP's: dp_shard (required), dp_replicate, tp.
std::optional<Layout> parse_layout(std::string_view text);

}  // namespace ws
