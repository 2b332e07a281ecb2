#include "workload/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ws {

BlockRange chunk_blocks(const Layout& layout, int layers, int v) {
  const int chunks = layout.pipeline * layout.virtual_stages;
  const int size = layers / chunks, extra = layers % chunks;
  const int first = v * size + std::min(v, extra);
  return {first, first + size + (v < extra ? 1 : 0)};
}

int warmup_forwards(const Layout& layout, int stage) {
  const int pp = layout.pipeline, vpp = layout.virtual_stages, total = layout.micro_batches * vpp;
  if (vpp == 1) return std::min(pp - stage - 1, total);
  return std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
}

std::vector<PipelineAction> pipeline_actions(const Layout& layout, int stage) {
  const int pp = layout.pipeline, vpp = layout.virtual_stages;
  const int total = layout.micro_batches * vpp;
  auto action = [&](int k, bool forward) {
    const int in_group = (k / pp) % vpp;
    return PipelineAction{forward, forward ? in_group : vpp - 1 - in_group, (k / (pp * vpp)) * pp + k % pp};
  };
  const int warmup = warmup_forwards(layout, stage);
  std::vector<PipelineAction> actions;
  actions.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) actions.push_back(action(k, true));
  for (int k = 0; k < total - warmup; ++k) {
    actions.push_back(action(warmup + k, true));
    actions.push_back(action(k, false));
  }
  for (int k = total - warmup; k < total; ++k) actions.push_back(action(k, false));
  return actions;
}

std::string pipeline_problem(const ModelSpec& model, const Batch& batch, const Layout& layout) {
  const int pp = layout.pipeline, vpp = layout.virtual_stages, mb = layout.micro_batches;
  if (pp < 1 || vpp < 1 || mb < 1) return fmt::format("pp={}, vpp={} and mb={} must be at least 1", pp, vpp, mb);
  const long long chunks = static_cast<long long>(pp) * vpp;
  // Uneven splits give the first chunks a block more (DeepSpeed's partition_uniform).
  if (model.layers < chunks)
    return fmt::format("layers {} fewer than pp*vpp={} (each model chunk holds at least one block)", model.layers,
                       chunks);
  if (vpp > 1 && pp == 1) return fmt::format("vpp={} needs pipeline stages (pp > 1)", vpp);
  // Megatron-LM's interleaved schedule runs micro-batches in groups of pp.
  if (vpp > 1 && mb % pp != 0)
    return fmt::format("the interleaved schedule (vpp={}) needs mb={} divisible by pp={}", vpp, mb, pp);
  if (layout.zero_stage != 0 && layout.strategy != Strategy::megatron)
    return fmt::format("zero={} {}: ZeRO stages are spelled in Megatron-LM's layouts (tp=..,dp=..,zero=1); FSDP's "
                       "dp_shard is ZeRO-3",
                       layout.zero_stage, to_string(layout.strategy));
  if (layout.zero_stage < 0 || layout.zero_stage > 3)
    return fmt::format("zero={}: ZeRO stages are 1, 2 and 3", layout.zero_stage);
  // DeepSpeed's PipelineEngine asserts a ZeRO stage below 2 ("ZeRO-2 and ZeRO-3 are incompatible
  // with pipeline parallelism").
  if (layout.zero_stage >= 2 && pp > 1)
    return fmt::format("zero={} with pp={} stages: DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism; use "
                       "zero=1 (Megatron-LM's distributed optimizer)",
                       layout.zero_stage, pp);
  // Under gradient accumulation ZeRO-2 and ZeRO-3 reduce each micro-batch's gradients (and ZeRO-3
  // gathers the parameters for each): a step the schedule does not write.
  if (layout.zero_stage >= 2 && mb > 1)
    return fmt::format("zero={} with mb={} micro-batches (gradient accumulation) is not modelled: ZeRO-2 and ZeRO-3 "
                       "reduce every micro-batch's gradients; use mb=1 or zero=1",
                       layout.zero_stage, mb);
  // Weights sharded over Z are gathered and their gradients scattered once per micro-batch pass;
  // Megatron-LM and DeepSpeed refuse ZeRO-3 with pipeline stages too.
  if (layout.pipelined() && layout.z > 1)
    return fmt::format("Gz={} (weights sharded over Z) with pipeline stages or micro-batches is not supported",
                       layout.z);
  if (layout.sequence_parallel && layout.strategy != Strategy::megatron)
    return "sequence parallelism (sp) is Megatron-LM's: spell the layout tp=..,pp=..,dp=..,mb=..,sp";
  if (layout.sequence_parallel && model.sequence_length % layout.y != 0)
    return fmt::format("sequence parallelism splits the sequence: seq {} not divisible by tp={}", model.sequence_length,
                       layout.y);
  const long long per_micro_batch = static_cast<long long>(layout.data) * layout.z * mb;
  if (batch.sequences % per_micro_batch != 0)
    return fmt::format("batch sequences {} not divisible by Gdata*Gz*mb={}", batch.sequences, per_micro_batch);
  return {};
}

}  // namespace ws
