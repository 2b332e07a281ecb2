#include "sim/layout_search/layout_enumeration.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ws {
namespace {

// The FC layers of the note with the groups their in-features (k) and out-features (n) are split
// over. Normal layers: k over X, n over Y; transposed layers swap the roles.
struct WeightShape {
  const char* name;
  long long k;
  long long n;
};

}  // namespace

std::string layout_problem(const ModelSpec& model, const Batch& batch, const Layout& layout) {
  const long long h = model.hidden;
  const int gx = layout.x, gy = layout.y, gz = layout.z;
  // Normal layers split k = h over X and n over Y; transposed ones (attention output, MLP down)
  // split their n = h over X and their k (h or ffn) over Y.
  if (h % gx != 0) return fmt::format("hidden {} not divisible by Gx={}", h, gx);
  if (h % gy != 0) return fmt::format("hidden {} not divisible by Gy={}", h, gy);
  // QKV's output (h queries, 2 kv_heads x d keys and values) and the MLP's (ffn, or SwiGLU's 2 ffn)
  // over Y; MLP down takes ffn in over Y.
  const long long qkv = model.qkv_features(), up = model.up_features(), ffn = model.ffn();
  // (For the GPT family, h over Y implies both.)
  if (qkv % gy != 0) return fmt::format("QKV features {} not divisible by Gy={}", qkv, gy);
  if (ffn % gy != 0) return fmt::format("ffn_hidden {} not divisible by Gy={}", ffn, gy);
  // Heads follow the QKV output features (split over Y); the transposed output projection then
  // takes them in over Y as its k, so each Y rank must own whole heads, and whole key/value heads.
  if (model.heads % gy != 0) return fmt::format("heads {} not divisible by Gy={}", model.heads, gy);
  if (model.kv_head_count() % gy != 0)
    return fmt::format("kv_heads {} not divisible by Gy={}", model.kv_head_count(), gy);
  // LM head (tied with the embedding, or its own weight): a normal FC layer, k = h over X, n = V over Y.
  if (model.vocabulary % gy != 0) {
    return fmt::format("vocabulary {} not divisible by Gy={}", model.vocabulary, gy);
  }
  const WeightShape shapes[] = {{"QKV", h, qkv},
                                {"attention output", h, h},
                                {"MLP up", h, up},
                                {"MLP down", ffn, h},
                                {"LM head", h, model.vocabulary}};
  for (const auto& s : shapes) {
    const long long block = s.k * s.n / (static_cast<long long>(gx) * gy);
    if (block % gz != 0) {
      return fmt::format("{} weight block {} (k*n/(Gx*Gy)) not divisible by Gz={}", s.name, block, gz);
    }
  }
  const long long shards = static_cast<long long>(layout.data) * gz;
  if (batch.sequences % shards != 0) {
    return fmt::format("batch sequences {} not divisible by Gdata*Gz={}", batch.sequences, shards);
  }
  return pipeline_problem(model, batch, layout);
}

std::vector<LayoutCandidate> enumerate_strategy_layouts(const ModelSpec& model, const Batch& batch, int devices,
                                                        Strategy strategy, int devices_per_node) {
  if (strategy == Strategy::four_d) return enumerate_layouts(model, batch, devices);
  std::vector<LayoutCandidate> out;
  auto add = [&](Layout l) {
    l.strategy = strategy;
    LayoutCandidate c;
    c.layout = l;
    c.reason = layout_problem(model, batch, l);
    c.valid = c.reason.empty();
    out.push_back(std::move(c));
  };
  const int node = std::max(devices_per_node, 1);
  for (int tp = 1; tp <= std::min(devices, node); ++tp) {
    if (devices % tp != 0 || node % tp != 0) continue;
    const int rest = devices / tp;
    if (strategy == Strategy::fsdp) {
      for (int replicate = 1; replicate <= rest; ++replicate)
        if (rest % replicate == 0) add(Layout{replicate, 1, tp, rest / replicate});
      continue;
    }
    for (int pp = 1; pp <= std::min(rest, model.layers); ++pp) {
      if (rest % pp != 0) continue;
      const int dp = rest / pp;
      for (const long long size : {1LL, 2LL, 4LL}) {
        const long long per_replica = batch.sequences / dp;
        if (batch.sequences % dp != 0 || per_replica % size != 0) continue;
        const auto mb = static_cast<int>(per_replica / size);
        for (const bool sp : {false, true}) {
          if (sp && tp == 1) continue;
          // The distributed optimizer wherever there is data parallelism to shard over: it moves the
          // same gradient bytes and keeps 1 / dp of the optimizer state (spelled zero=1; a layout
          // without it is priced when asked for by --layout).
          const int zero = dp > 1 ? 1 : 0;
          add(Layout{dp, 1, tp, 1, pp, 1, mb, Strategy::megatron, sp, zero});
          if (pp > 1 && model.layers % (2 * pp) == 0 && mb % pp == 0)
            add(Layout{dp, 1, tp, 1, pp, 2, mb, Strategy::megatron, sp, zero});
        }
      }
    }
  }
  return out;
}

std::vector<LayoutCandidate> enumerate_layouts(const ModelSpec& model, const Batch& batch, int devices) {
  std::vector<int> divisors;
  for (int d = 1; d <= devices; ++d) {
    if (devices % d == 0) divisors.push_back(d);
  }
  std::vector<LayoutCandidate> out;
  // Nested loops over ascending divisors give lexicographic (data, x, y, z) order directly.
  for (int data : divisors) {
    const int rest_x = devices / data;
    for (int x : divisors) {
      if (x > rest_x) break;
      if (rest_x % x != 0) continue;
      const int rest_y = rest_x / x;
      for (int y : divisors) {
        if (y > rest_y) break;
        if (rest_y % y != 0) continue;
        LayoutCandidate c;
        c.layout = Layout{data, x, y, rest_y / y};
        c.reason = layout_problem(model, batch, c.layout);
        c.valid = c.reason.empty();
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

}  // namespace ws
