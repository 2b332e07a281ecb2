// The checkpoint's on-disk format, read without MPI or a trainer: the manifest (JSON) and a
// rank's shard (binary header, GEMM choices, values and AdamW moments). Every field is checked
// for type and range before it is used, sizes are computed without overflow, and a shard's file
// name must be exactly the one this rank writes (no path leaves the checkpoint directory). Each
// check returns "" or one line naming the file and the field. Fuzzed (tests/fuzz/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ws {

inline constexpr char kCheckpointMagic[8] = {'W', 'S', 'C', 'K', 'P', 'T', '0', '1'};
inline constexpr int kCheckpointVersion = 1;
inline constexpr int kGemmChoiceFields = 6;  // op_a, op_b, m, n, k, variant
// More distinct GEMM shapes than any model has (a block has ~20): a larger count is corruption.
inline constexpr std::int64_t kMaxGemmChoices = 1 << 20;

// The shard file: magic, then these int64 fields, then gemm_choices x 6 int64, then the values
// (`parameters` scalars), the first and the second moments (each as many scalars as the rank's
// optimizer updates: `parameters`, or the distributed optimizer's shards).
struct ShardHeader {
  std::int64_t version = kCheckpointVersion, scalar_bytes = 0, rank = 0, steps_done = 0, optimizer_steps = 0,
               parameters = 0, gemm_choices = 0;
};

// "rank00003.step00000042.bin": the only name a shard may have.
std::string shard_file_name(int rank, long long step);

// What the manifest says about this rank's shard.
struct ShardEntry {
  long long step = 0;
  std::string file;  // a bare file name inside the checkpoint directory
  std::uint64_t bytes = 0;
  std::string fnv1a64;  // 16 lowercase hex digits
};

// Checks the manifest text (`path` for messages) against this run's identity (the fields that
// must match: model, layout, batch, seed, data, precision) and picks rank `rank`'s entry of
// `ranks`. Returns "" and fills `entry`, or the problem.
std::string check_manifest(std::string_view text, const std::string& path, const nlohmann::json& identity,
                           int ranks, int rank, ShardEntry& entry);

// What this rank's shard must hold.
struct ShardExpectation {
  std::int64_t scalar_bytes = 0;
  int rank = 0;
  std::int64_t parameters = 0;
  long long step = 0;
  std::int64_t moments = -1;  // AdamW moments of each kind; -1: one per parameter
};

// Checks a shard's bytes (already matched to the manifest's size and checksum, `path` for
// messages): magic, version, every header field in range, the GEMM choice table's fields valid,
// the total size exact. Returns "" and fills `header` and `choices` (gemm_choices x 6), or the
// problem.
std::string check_shard(const std::vector<char>& bytes, const std::string& path, const ShardExpectation& want,
                        ShardHeader& header, std::vector<std::int64_t>& choices);

}  // namespace ws
