// Training tokens: a seeded synthetic stream and a byte-level text-file loader, both addressed by
// (step, global sequence index) so that any rank can produce exactly its shard of the global
// batch without reading anyone else's, and every layout sees the same global batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/layout.hpp"

namespace ws {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // Writes `seq` inputs and the `seq` next-token targets of one sequence.
  virtual void sequence(long long step, long long index, int seq, int* inputs, int* targets) const = 0;
  // Tokens are in [0, vocabulary()).
  virtual int vocabulary() const = 0;
};

// Mostly a fixed bigram rule (next = 5 t + 1 mod V) with 1 token in 8 drawn at random: learnable,
// so training visibly lowers the loss, yet not trivially constant.
class SyntheticTokens final : public TokenSource {
 public:
  SyntheticTokens(std::uint64_t seed, int vocabulary) : seed_(seed), vocabulary_(vocabulary) {}
  void sequence(long long step, long long index, int seq, int* inputs, int* targets) const override;
  int vocabulary() const override { return vocabulary_; }

 private:
  std::uint64_t seed_;
  int vocabulary_;
};

// How a text file is cut into sequences.
enum class TextOrder {
  random_offsets,  // each sequence starts at a seeded random byte offset (pretraining-like)
  // The file is cut into consecutive chunks of seq + 1 bytes (the last partial one dropped), each
  // one document; global sequence g = step * batch + index reads chunk g mod chunks. With batch =
  // chunks every step is one epoch over the same documents: what a memorization study repeats.
  chunks,
};

// The largest text file the engine reads (1 GiB): every rank holds the whole file in memory.
inline constexpr long long kMaxTextFileBytes = 1LL << 30;

// The bytes of the regular file at `path` (at most kMaxTextFileBytes); a directory, device, FIFO
// or socket is refused from its metadata, before any read. Throws InputError naming `option`.
std::vector<unsigned char> read_text_file(const std::string& path, const std::string& option);

// Bytes of a file as tokens (vocabulary 256).
class TextFileTokens final : public TokenSource {
 public:
  // Throws InputError if the file cannot be read (see read_text_file) or is shorter than seq + 1
  // bytes. `batch` (global sequences per step) is used by TextOrder::chunks only.
  TextFileTokens(const std::string& path, std::uint64_t seed, int seq, TextOrder order = TextOrder::random_offsets,
                 long long batch = 1, const std::string& option = "--data");
  void sequence(long long step, long long index, int seq, int* inputs, int* targets) const override;
  int vocabulary() const override { return 256; }
  // Documents of TextOrder::chunks (0 for random offsets).
  long long chunks() const { return order_ == TextOrder::chunks ? chunks_ : 0; }

 private:
  std::vector<unsigned char> bytes_;
  std::uint64_t seed_;
  TextOrder order_;
  long long batch_;
  long long chunks_;
};

// This rank's contiguous share of the global batch: shard d * Gz + z of Gdata * Gz.
struct BatchShard {
  long long first = 0;
  long long count = 0;
};
BatchShard batch_shard(const Layout& layout, const RankCoords& coords, long long global_sequences);

struct TokenBatch {
  int sequences = 0;
  std::vector<int> inputs, targets;  // sequences * seq each
};
TokenBatch load_batch(const TokenSource& source, long long step, const BatchShard& shard, int seq);

}  // namespace ws
