// The checkpoint format read without MPI: a manifest and a shard that the engine would write
// pass; the hostile ones of issue 15 (a path out of the directory, a size that is not a number,
// a GEMM table whose size wraps 64 bits, a negative optimizer step) are refused with one line
// naming the file and the field.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/train/checkpoint_format.hpp"

namespace ws {
namespace {

const nlohmann::json kIdentity{{"model", {{"layers", 2}}}, {"layout", "2x1x1x1"}, {"seed", 1}};

nlohmann::json manifest(int ranks = 2, long long step = 7) {
  nlohmann::json m = kIdentity;
  m["format"] = "weakscale-engine-checkpoint";
  m["version"] = kCheckpointVersion;
  m["step"] = step;
  for (int r = 0; r < ranks; ++r)
    m["shards"].push_back({{"rank", r}, {"file", shard_file_name(r, step)}, {"bytes", 1000}, {"fnv1a64", "0123456789abcdef"}});
  return m;
}

std::string check(const nlohmann::json& m, int rank = 1) {
  ShardEntry entry;
  return check_manifest(m.dump(), "ckpt/manifest.json", kIdentity, 2, rank, entry);
}

void expect_problem(const std::string& problem, const std::string& part) {
  EXPECT_NE(problem.find(part), std::string::npos) << "'" << problem << "' lacks '" << part << "'";
}

TEST(CheckpointManifest, AcceptsWhatTheEngineWrites) {
  ShardEntry entry;
  ASSERT_EQ(check_manifest(manifest().dump(), "m.json", kIdentity, 2, 1, entry), "");
  EXPECT_EQ(entry.file, "rank00001.step00000007.bin");
  EXPECT_EQ(entry.step, 7);
  EXPECT_EQ(entry.bytes, 1000u);
  EXPECT_EQ(entry.fnv1a64, "0123456789abcdef");
}

TEST(CheckpointManifest, NeverFollowsAPathOutOfTheDirectory) {
  for (const char* file : {"../../../../etc/passwd", "/etc/passwd", "rank00000.step00000007.bin", ".", "",
                           "sub/rank00001.step00000007.bin"}) {
    nlohmann::json m = manifest();
    m["shards"][1]["file"] = file;
    expect_problem(check(m), "shards[1].file must be \"rank00001.step00000007.bin\"");
  }
}

TEST(CheckpointManifest, RejectsFieldsOfTheWrongTypeOrRange) {
  nlohmann::json m = manifest();
  m["shards"][1]["bytes"] = "lots";
  expect_problem(check(m), "shards[1].bytes must be a non-negative integer, got \"lots\"");
  m = manifest();
  m["shards"][1]["bytes"] = -5;
  expect_problem(check(m), "shards[1].bytes must be a non-negative integer");
  m = manifest();
  m["shards"][1]["fnv1a64"] = 12;
  expect_problem(check(m), "fnv1a64 must be 16 lowercase hex digits");
  m = manifest();
  m["shards"][1] = "rank1";
  expect_problem(check(m), "shards[1]: expected an object");
  m = manifest();
  m["step"] = -3;
  expect_problem(check(m), "\"step\" must be an integer");
  m = manifest();
  m["step"] = "7";
  expect_problem(check(m), "\"step\" must be an integer");
  m = manifest();
  m["shards"].erase(1);
  expect_problem(check(m), "\"shards\" must be a list of 2 entries");
  m = manifest();
  m["seed"] = 2;
  expect_problem(check(m), "seed 2 differs from this run's 1");
  expect_problem(check(nlohmann::json::array({1, 2})), "expected a JSON object");
  ShardEntry entry;
  expect_problem(check_manifest("{\"format\": ", "m.json", kIdentity, 2, 0, entry), "m.json is not valid JSON");
}

// A shard as save_checkpoint lays it out: magic, header, `choices` GEMM choices, 3 x n scalars.
std::vector<char> shard(ShardHeader h, const std::vector<std::int64_t>& table, std::size_t state_bytes) {
  const std::size_t table_bytes = table.size() * sizeof(std::int64_t);
  std::vector<char> bytes(sizeof kCheckpointMagic + sizeof h + table_bytes + state_bytes, '\0');
  std::memcpy(bytes.data(), kCheckpointMagic, sizeof kCheckpointMagic);
  std::memcpy(bytes.data() + sizeof kCheckpointMagic, &h, sizeof h);
  if (table_bytes > 0) std::memcpy(bytes.data() + sizeof kCheckpointMagic + sizeof h, table.data(), table_bytes);
  return bytes;
}

ShardHeader good_header() {
  ShardHeader h;
  h.scalar_bytes = 4, h.rank = 1, h.steps_done = 7, h.optimizer_steps = 7, h.parameters = 10, h.gemm_choices = 1;
  return h;
}

const ShardExpectation kWant{4, 1, 10, 7};
const std::vector<std::int64_t> kTable{0, 1, 64, 128, 32, 2};

TEST(CheckpointShard, AcceptsWhatTheEngineWrites) {
  ShardHeader h;
  std::vector<std::int64_t> choices;
  ASSERT_EQ(check_shard(shard(good_header(), kTable, 3 * 10 * 4), "s.bin", kWant, h, choices), "");
  EXPECT_EQ(choices, kTable);
  EXPECT_EQ(h.optimizer_steps, 7);
}

// The distributed optimizer's shard: the rank's parameters, then the moments of its shards only.
TEST(CheckpointShard, DistributedOptimizerShardsHoldTheirMomentsOnly) {
  ShardHeader h;
  std::vector<std::int64_t> choices;
  const ShardExpectation sharded{4, 1, 10, 7, 3};
  EXPECT_EQ(check_shard(shard(good_header(), kTable, (10 + 2 * 3) * 4), "s.bin", sharded, h, choices), "");
  expect_problem(check_shard(shard(good_header(), kTable, 3 * 10 * 4), "s.bin", sharded, h, choices),
                 "but its header describes");
}

TEST(CheckpointShard, RangeChecksEveryHeaderFieldBeforeUsingIt) {
  ShardHeader out;
  std::vector<std::int64_t> choices;
  // 2^60 choices: 2^60 x 48 bytes wraps to a small number; the old size check passed it.
  ShardHeader h = good_header();
  h.gemm_choices = std::int64_t{1} << 60;
  expect_problem(check_shard(shard(h, kTable, 120), "s.bin", kWant, out, choices),
                 "shard s.bin: header field gemm_choices is 1152921504606846976, expected 0 to 1048576");
  h = good_header();
  h.optimizer_steps = -7;
  expect_problem(check_shard(shard(h, kTable, 120), "s.bin", kWant, out, choices),
                 "header field optimizer_steps is -7, expected 0 to 7");
  h = good_header();
  h.rank = 0;
  expect_problem(check_shard(shard(h, kTable, 120), "s.bin", kWant, out, choices), "header field rank is 0");
  h = good_header();
  h.scalar_bytes = 8;
  expect_problem(check_shard(shard(h, kTable, 120), "s.bin", kWant, out, choices), "header field scalar_bytes is 8");
  expect_problem(check_shard(shard(good_header(), kTable, 119), "s.bin", kWant, out, choices),
                 "shard s.bin: 231 bytes, but its header describes 232");
  expect_problem(check_shard(shard(good_header(), {0, 1, 64, 128, 32, 9}, 120), "s.bin", kWant, out, choices),
                 "GEMM choice 0 is invalid");
  expect_problem(check_shard(shard(good_header(), {0, 1, 0, 128, 32, 1}, 120), "s.bin", kWant, out, choices),
                 "GEMM choice 0 is invalid");
  std::vector<char> bytes = shard(good_header(), kTable, 120);
  bytes[0] = 'X';
  expect_problem(check_shard(bytes, "s.bin", kWant, out, choices), "not a weakscale-engine shard");
  expect_problem(check_shard(std::vector<char>(10, 'W'), "s.bin", kWant, out, choices), "shorter than its header");
}

}  // namespace
}  // namespace ws
