#include "engine/train/checkpoint_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <iterator>

#include "engine/kernels/gemm.hpp"

namespace ws {

std::string shard_file_name(int rank, long long step) { return fmt::format("rank{:05d}.step{:08d}.bin", rank, step); }

namespace {

bool is_hex16(const std::string& s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

std::string check_manifest(std::string_view text, const std::string& path, const nlohmann::json& identity, int ranks,
                           int rank, ShardEntry& entry) {
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("{} is not valid JSON ({})", path, e.what());
  }
  if (!manifest.is_object()) return fmt::format("{}: expected a JSON object", path);
  const auto format = manifest.find("format");
  const auto version = manifest.find("version");
  if (format == manifest.end() || *format != "weakscale-engine-checkpoint" || version == manifest.end() ||
      *version != kCheckpointVersion)
    return fmt::format("{} is not a version-{} weakscale-engine checkpoint manifest", path, kCheckpointVersion);
  for (const auto& [key, want] : identity.items()) {
    const auto got = manifest.find(key);
    if (got == manifest.end()) return fmt::format("{}: has no \"{}\"", path, key);
    if (*got != want) return fmt::format("{}: {} {} differs from this run's {}", path, key, got->dump(), want.dump());
  }
  const auto step = manifest.find("step");
  if (step == manifest.end() || !step->is_number_integer() || step->get<long long>() < 0 ||
      step->get<long long>() > 99'999'999)
    return fmt::format("{}: \"step\" must be an integer from 0 to 99999999", path);
  entry.step = step->get<long long>();
  const auto shards = manifest.find("shards");
  if (shards == manifest.end() || !shards->is_array() || shards->size() != static_cast<std::size_t>(ranks))
    return fmt::format("{}: \"shards\" must be a list of {} entries, one per rank", path, ranks);
  const nlohmann::json& e = (*shards)[static_cast<std::size_t>(rank)];
  const std::string where = fmt::format("{}: shards[{}]", path, rank);
  if (!e.is_object()) return where + ": expected an object with file, bytes and fnv1a64";
  const auto file = e.find("file"), bytes = e.find("bytes"), hash = e.find("fnv1a64");
  // The name is fixed by rank and step: a path, "..", a directory or another rank's shard is
  // never followed.
  const std::string expected_file = shard_file_name(rank, entry.step);
  if (file == e.end() || !file->is_string() || file->get<std::string>() != expected_file)
    return fmt::format("{}.file must be \"{}\" (rank {}, step {}), got {}", where, expected_file, rank, entry.step,
                       file == e.end() ? std::string("nothing") : file->dump());
  if (bytes == e.end() || !bytes->is_number_unsigned())
    return fmt::format("{}.bytes must be a non-negative integer, got {}", where,
                       bytes == e.end() ? std::string("nothing") : bytes->dump());
  if (hash == e.end() || !hash->is_string() || !is_hex16(hash->get<std::string>()))
    return fmt::format("{}.fnv1a64 must be 16 lowercase hex digits, got {}", where,
                       hash == e.end() ? std::string("nothing") : hash->dump());
  entry.file = expected_file;
  entry.bytes = bytes->get<std::uint64_t>();
  entry.fnv1a64 = hash->get<std::string>();
  return {};
}

std::string check_shard(const std::vector<char>& bytes, const std::string& path, const ShardExpectation& want,
                        ShardHeader& h, std::vector<std::int64_t>& choices) {
  constexpr std::size_t kFixed = sizeof kCheckpointMagic + sizeof(ShardHeader);
  if (bytes.size() < kFixed) return fmt::format("shard {} is shorter than its header ({} bytes)", path, kFixed);
  if (!std::equal(kCheckpointMagic, kCheckpointMagic + sizeof kCheckpointMagic, bytes.data()))
    return fmt::format("shard {} is not a weakscale-engine shard (magic)", path);
  std::memcpy(&h, bytes.data() + sizeof kCheckpointMagic, sizeof h);
  auto field = [&](const char* name, std::int64_t got, std::int64_t low, std::int64_t high) -> std::string {
    if (got >= low && got <= high) return {};
    return fmt::format("shard {}: header field {} is {}, expected {} to {}", path, name, got, low, high);
  };
  for (const std::string& problem :
       {field("version", h.version, kCheckpointVersion, kCheckpointVersion),
        field("scalar_bytes", h.scalar_bytes, want.scalar_bytes, want.scalar_bytes),
        field("rank", h.rank, want.rank, want.rank), field("parameters", h.parameters, want.parameters, want.parameters),
        field("steps_done", h.steps_done, want.step, want.step),
        field("optimizer_steps", h.optimizer_steps, 0, h.steps_done),
        field("gemm_choices", h.gemm_choices, 0, kMaxGemmChoices)})
    if (!problem.empty()) return problem;
  // Every factor is range-checked above: gemm_choices <= 2^20 and parameters is this run's, so
  // the products below fit in 64 bits.
  const auto table = static_cast<std::uint64_t>(h.gemm_choices) * kGemmChoiceFields * sizeof(std::int64_t);
  const auto moments = static_cast<std::uint64_t>(want.moments >= 0 ? want.moments : want.parameters);
  const auto state =
      (static_cast<std::uint64_t>(want.parameters) + 2 * moments) * static_cast<std::uint64_t>(want.scalar_bytes);
  if (bytes.size() != kFixed + table + state)
    return fmt::format("shard {}: {} bytes, but its header describes {}", path, bytes.size(), kFixed + table + state);
  choices.resize(static_cast<std::size_t>(h.gemm_choices) * kGemmChoiceFields);
  if (table > 0) std::memcpy(choices.data(), bytes.data() + kFixed, table);  // an empty vector's data() may be null
  for (std::size_t i = 0; i < choices.size(); i += kGemmChoiceFields) {
    const std::int64_t* c = choices.data() + i;
    constexpr auto kVariants = static_cast<std::int64_t>(std::size(kGemmVariants));
    const bool valid = c[0] >= 0 && c[0] <= 1 && c[1] >= 0 && c[1] <= 1 && c[5] >= 0 && c[5] < kVariants &&
                       std::all_of(c + 2, c + 5, [](std::int64_t d) { return d >= 1 && d <= INT_MAX; });
    if (!valid)
      return fmt::format("shard {}: GEMM choice {} is invalid (ops 0-1, sizes 1-{}, variant 0-2)", path,
                         i / kGemmChoiceFields, INT_MAX);
  }
  return {};
}

}  // namespace ws
