#include "workload/pipeline.hpp"

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

}  // namespace ws
