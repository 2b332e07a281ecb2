#include "engine/train/token_source.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "base/random.hpp"
#include "base/input_file.hpp"
#include "engine/train/message_text.hpp"
#include "engine/train/run_config.hpp"

namespace ws {

namespace {
// One stream per (step, sequence): 2^40 sequences per step is far beyond any batch.
std::uint64_t stream_of(long long step, long long index) {
  return (static_cast<std::uint64_t>(step) << 40) ^ static_cast<std::uint64_t>(index);
}

}  // namespace

std::vector<unsigned char> read_text_file(const std::string& path, const std::string& option) {
  // A device (/dev/zero), a FIFO or a socket would block the read or never end it, and a file
  // above the limit would not fit in memory on every rank: each is refused before a byte is read.
  std::string text;
  if (const auto problem = read_regular_file(path, static_cast<std::uint64_t>(kMaxTextFileBytes), text))
    throw InputError(fmt::format("{} {}: {}", option, quote_for_message(path), *problem));
  return {text.begin(), text.end()};
}

void SyntheticTokens::sequence(long long step, long long index, int seq, int* inputs, int* targets) const {
  SplitMix64 rng(seed_, stream_of(step, index));
  const auto v = static_cast<std::uint64_t>(vocabulary_);
  std::uint64_t token = rng.below(v);
  for (int i = 0; i < seq; ++i) {
    inputs[i] = static_cast<int>(token);
    token = rng.below(8) == 0 ? rng.below(v) : (5 * token + 1) % v;
    targets[i] = static_cast<int>(token);
  }
}

TextFileTokens::TextFileTokens(const std::string& path, std::uint64_t seed, int seq, TextOrder order, long long batch,
                               const std::string& option)
    : bytes_(read_text_file(path, option)), seed_(seed), order_(order), batch_(batch) {
  if (bytes_.size() < static_cast<std::size_t>(seq) + 1)
    throw InputError(fmt::format("{} {}: {} bytes, but one sequence needs --seq + 1 = {}", option,
                                 quote_for_message(path), bytes_.size(), seq + 1));
  chunks_ = static_cast<long long>(bytes_.size() / (static_cast<std::size_t>(seq) + 1));
}

void TextFileTokens::sequence(long long step, long long index, int seq, int* inputs, int* targets) const {
  std::size_t start = 0;
  if (order_ == TextOrder::chunks) {
    const long long chunk = (step * batch_ + index) % chunks_;
    start = static_cast<std::size_t>(chunk) * (static_cast<std::size_t>(seq) + 1);
  } else {
    SplitMix64 rng(seed_, stream_of(step, index));
    start = rng.below(bytes_.size() - static_cast<std::size_t>(seq));
  }
  for (int i = 0; i < seq; ++i) {
    inputs[i] = bytes_[start + i];
    targets[i] = bytes_[start + i + 1];
  }
}

BatchShard batch_shard(const Layout& layout, const RankCoords& coords, long long global_sequences) {
  const long long shards = static_cast<long long>(layout.data) * layout.z;
  const long long per_shard = global_sequences / shards;
  return BatchShard{(static_cast<long long>(coords.data) * layout.z + coords.z) * per_shard, per_shard};
}

TokenBatch load_batch(const TokenSource& source, long long step, const BatchShard& shard, int seq) {
  TokenBatch batch;
  batch.sequences = static_cast<int>(shard.count);
  batch.inputs.resize(static_cast<std::size_t>(shard.count) * seq);
  batch.targets.resize(batch.inputs.size());
  for (long long i = 0; i < shard.count; ++i)
    source.sequence(step, shard.first + i, seq, batch.inputs.data() + i * seq, batch.targets.data() + i * seq);
  return batch;
}

}  // namespace ws
