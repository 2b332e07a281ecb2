#include "engine/train/run_config.hpp"

#include "workload/memory.hpp"
#include "workload/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <utility>
#include <vector>

namespace ws {

void validate_run(const RunConfig& run, int world_size) {
  const ModelSpec& m = run.model;
  const Layout& l = run.layout;
  std::vector<std::string> problems;
  auto need_positive = [&](const char* what, long long v) {
    if (v <= 0) problems.push_back(fmt::format("{} must be positive (got {})", what, v));
  };
  need_positive("--layers", m.layers);
  need_positive("--hidden", m.hidden);
  need_positive("--heads", m.heads);
  need_positive("--seq", m.sequence_length);
  need_positive("--vocab", m.vocabulary);
  need_positive("--batch", run.batch_sequences);
  for (const auto& [flag, value] : {std::pair{"--layers", static_cast<long long>(m.layers)},
                                    std::pair{"--hidden", static_cast<long long>(m.hidden)},
                                    std::pair{"--heads", static_cast<long long>(m.heads)},
                                    std::pair{"--seq", static_cast<long long>(m.sequence_length)},
                                    std::pair{"--vocab", static_cast<long long>(m.vocabulary)}})
    if (value > kMaxDimension) problems.push_back(fmt::format("{} {} is above the engine's limit {}", flag, value, kMaxDimension));
  const long long shards_of_batch = static_cast<long long>(std::max(1, l.data)) * std::max(1, l.z);
  if (run.batch_sequences > 0 && m.sequence_length > 0 &&
      static_cast<double>(run.batch_sequences) / static_cast<double>(shards_of_batch) * m.sequence_length > INT_MAX)
    problems.push_back(fmt::format("--batch {} x --seq {} is {} tokens per rank (Gdata*Gz = {}), above the engine's "
                                   "limit 2147483647",
                                   run.batch_sequences, m.sequence_length,
                                   static_cast<double>(run.batch_sequences) / static_cast<double>(shards_of_batch) *
                                       m.sequence_length,
                                   shards_of_batch));
  if (m.heads > 0 && m.hidden % m.heads != 0)
    problems.push_back(fmt::format("--hidden {} is not divisible by --heads {}", m.hidden, m.heads));
  if (m.heads > 0 && m.kv_head_count() > 0 && m.heads % m.kv_head_count() != 0)
    problems.push_back(fmt::format("--kv-heads {} does not divide --heads {}", m.kv_head_count(), m.heads));
  if (m.position == Position::rope && m.heads > 0 && m.hidden % m.heads == 0 && m.head_dim() % 2 != 0)
    problems.push_back(fmt::format("rotary positions turn feature pairs: the head width --hidden / --heads = {} "
                                   "must be even",
                                   m.head_dim()));
  if (l.pipelined() || l.virtual_stages != 1 || l.sequence_parallel || l.zero_stage != 0) {
    // Stages, chunks and micro-batches as the simulator takes them (one check for both).
    const std::string pipeline = pipeline_problem(m, Batch{run.batch_sequences}, l);
    if (!pipeline.empty()) problems.push_back(fmt::format("layout {}: {}", to_string(l), pipeline));
  }
  if (l.vocabulary_parallel() && m.vocabulary % l.y != 0)
    problems.push_back(fmt::format("--vocab {} is not divisible by Gy = tp = {} (layout {} splits the vocabulary)",
                                   m.vocabulary, l.y, to_string(l)));
  if (!holds_devices(l, world_size)) {
    // The product in floating point: four parsed parts can overflow an int (or a long long).
    problems.push_back(fmt::format("layout {} needs {:.0f} ranks but the job has {}", to_string(l),
                                   static_cast<double>(l.data) * l.x * l.y * l.z * l.pipeline, world_size));
  }
  const long long shards = static_cast<long long>(l.data) * l.z;
  if (run.batch_sequences > 0 && run.batch_sequences % shards != 0)
    problems.push_back(fmt::format("--batch {} is not divisible by Gdata*Gz = {}", run.batch_sequences, shards));
  // Everything a future sharded build must also check: features and heads divide over X and Y.
  for (auto [name, g] : {std::pair{"Gx", l.x}, std::pair{"Gy", l.y}})
    if (m.hidden > 0 && m.hidden % g != 0)
      problems.push_back(fmt::format("--hidden {} is not divisible by {} = {}", m.hidden, name, g));
  if (m.heads > 0 && m.heads % l.y != 0)
    problems.push_back(fmt::format("--heads {} is not divisible by Gy = {}", m.heads, l.y));
  if (!m.gpt_style() && m.kv_head_count() % l.y != 0)
    problems.push_back(fmt::format("--kv-heads {} is not divisible by Gy = {}", m.kv_head_count(), l.y));
  if (m.ffn() % l.y != 0)
    problems.push_back(fmt::format("the MLP width {} is not divisible by Gy = {}", m.ffn(), l.y));
  // Every FC block (h/Gx x c h/Gy, c = 1, 3, 4 for GPT) is cut into Gz equal shards.
  if (m.gpt_style() && m.hidden > 0 && m.hidden % l.x == 0 && m.hidden % l.y == 0) {
    const long long block = static_cast<long long>(m.hidden / l.x) * (m.hidden / l.y);
    if (block % l.z != 0)
      problems.push_back(fmt::format("the FC weight blocks (hidden/Gx x hidden/Gy = {} elements) do not divide "
                                     "into Gz = {} shards",
                                     block, l.z));
  }
  // A Llama block's layers: QKV h x (h + 2 kv d), the MLP h x 2 ffn and ffn x h, the projection h x h.
  if (!m.gpt_style() && m.hidden > 0 && m.hidden % l.x == 0 && m.hidden % l.y == 0) {
    const long long h = m.hidden;
    for (const long long n : {m.qkv_features(), h, m.up_features(), m.ffn()}) {
      const long long block = (h / l.x) * (n / l.y);
      if (n % l.y == 0 && block % l.z != 0)
        problems.push_back(fmt::format("an FC weight block (hidden/Gx x {}/Gy = {} elements) does not divide into "
                                       "Gz = {} shards",
                                       n, block, l.z));
    }
  }
  const GoldfishOptions& g = run.goldfish;
  if (g.k < 0 || g.k == 1)
    problems.push_back(fmt::format("--goldfish-k {} must be 0 (off) or at least 2 (1 would drop every token)", g.k));
  if (g.enabled() && m.sequence_length > 0 && (g.context < 1 || g.context >= m.sequence_length))
    problems.push_back(fmt::format("--goldfish-context {} must be between 1 and --seq - 1 = {} (the tokens hashed "
                                   "must fit before a target of the sequence)",
                                   g.context, m.sequence_length - 1));
  if (problems.empty()) return;
  std::string text = problems.front();
  for (std::size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
  throw InputError(text);
}

Bytes engine_memory_bytes(const RunConfig& run) {
  const Layout& l = run.layout;
  const double tokens = static_cast<double>(run.batch_sequences) / (static_cast<double>(l.data) * l.z) *
                        run.model.sequence_length;
  // The logits are bounded by the checked dimensions (tokens per rank < 2^31, vocabulary <= 2^24).
  const auto logits = static_cast<Bytes>(2.0 * tokens * run.model.vocabulary * sizeof(float));
  return estimate_memory(run.model, Batch{run.batch_sequences}, l, sizeof(float), run.schedule.recompute).total_bytes() +
         logits;
}

}  // namespace ws
