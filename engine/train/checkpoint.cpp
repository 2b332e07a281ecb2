#include "engine/train/checkpoint.hpp"

#include <fmt/format.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/comm/mpi_check.hpp"

namespace ws {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'W', 'S', 'C', 'K', 'P', 'T', '0', '1'};
constexpr int kVersion = 1;
constexpr const char* kManifest = "manifest.json";
constexpr std::size_t kMessageBytes = 2048;

std::string shard_name(int rank, long long step) {
  return fmt::format("rank{:05d}.step{:08d}.bin", rank, step);
}

// The shard file: magic, then int64 header fields, then the GEMM choices, then values, first and
// second moments (each `parameters` scalars).
struct ShardHeader {
  std::int64_t version = kVersion, scalar_bytes = 0, rank = 0, steps_done = 0, optimizer_steps = 0,
               parameters = 0, gemm_choices = 0;
};

// One GEMM choice: op_a, op_b, m, n, k, variant.
constexpr int kChoiceFields = 6;

nlohmann::json identity(const RunConfig& run, const std::string& data, std::size_t scalar_bytes) {
  const ModelSpec& m = run.model;
  return {{"model",
           {{"layers", m.layers},
            {"hidden", m.hidden},
            {"heads", m.heads},
            {"seq", m.sequence_length},
            {"vocab", m.vocabulary}}},
          {"layout", to_string(run.layout)},
          {"batch", run.batch_sequences},
          {"seed", run.seed},
          {"data", data},
          {"scalar_bytes", scalar_bytes}};
}

// Every rank's message (empty: fine) becomes the first failing rank's message on every rank.
std::string agree(const std::string& local, const Communicator& world) {
  if (world.size() == 1) return local;
  int first = local.empty() ? INT_MAX : world.rank();
  WS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, world.comm()));
  if (first == INT_MAX) return {};
  std::vector<char> text(kMessageBytes, '\0');
  if (world.rank() == first) local.copy(text.data(), kMessageBytes - 1);
  WS_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(kMessageBytes), MPI_CHAR, first, world.comm()));
  return std::string(text.data());
}

void throw_if(const std::string& message) {
  if (!message.empty()) throw CheckpointError(message);
}

void write_all(std::ofstream& out, std::uint64_t& hash, const void* data, std::size_t bytes) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  hash = fnv1a(data, bytes, hash);
}

// Writes `path` through `path`.tmp and a rename; returns "" or what went wrong.
template <class T>
std::string write_shard(const Trainer<T>& trainer, const std::string& path, std::uint64_t& bytes,
                        std::uint64_t& hash) {
  const auto& store = trainer.model().parameters();
  const auto& choices = trainer.tuner().choices();
  ShardHeader h;
  h.scalar_bytes = sizeof(T);
  h.rank = trainer.grid().rank();
  h.steps_done = trainer.steps_done();
  h.optimizer_steps = trainer.optimizer().steps();
  h.parameters = static_cast<std::int64_t>(store.size());
  h.gemm_choices = static_cast<std::int64_t>(choices.size());
  std::vector<std::int64_t> table;
  for (const auto& [shape, choice] : choices)
    table.insert(table.end(), {static_cast<std::int64_t>(shape.op_a), static_cast<std::int64_t>(shape.op_b),
                               shape.m, shape.n, shape.k, static_cast<std::int64_t>(choice.variant)});
  const std::string temp = path + ".tmp";
  hash = kFnvOffset;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return fmt::format("checkpoint shard {}: cannot create {}", path, temp);
    write_all(out, hash, kMagic, sizeof kMagic);
    write_all(out, hash, &h, sizeof h);
    write_all(out, hash, table.data(), table.size() * sizeof(std::int64_t));
    const std::size_t n = store.size() * sizeof(T);
    write_all(out, hash, store.values().data(), n);
    write_all(out, hash, trainer.optimizer().first_moment().data(), n);
    write_all(out, hash, trainer.optimizer().second_moment().data(), n);
    out.flush();
    if (!out) return fmt::format("checkpoint shard {}: write to {} failed", path, temp);
    bytes = static_cast<std::uint64_t>(out.tellp());
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec)
    return fmt::format("checkpoint shard {}: cannot rename {} into place: {}", path, temp, ec.message());
  return {};
}

std::string check_field(const nlohmann::json& got, const nlohmann::json& want, const std::string& key) {
  if (!got.contains(key)) return fmt::format("has no \"{}\"", key);
  if (got[key] != want[key])
    return fmt::format("{} {} differs from this run's {}", key, got[key].dump(), want[key].dump());
  return {};
}

}  // namespace

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

template <class T>
void save_checkpoint(const Trainer<T>& trainer, const std::string& data, const std::string& dir) {
  const Communicator& world = trainer.grid().world();
  const long long step = trainer.steps_done();
  std::string problem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) problem = fmt::format("--checkpoint-dir {}: cannot create the directory: {}", dir, ec.message());
  throw_if(agree(problem, world));

  const std::string file = shard_name(world.rank(), step);
  std::uint64_t bytes = 0, hash = 0;
  problem = write_shard(trainer, (fs::path(dir) / file).string(), bytes, hash);
  throw_if(agree(problem, world));

  // Rank 0 learns every shard's size and checksum; the manifest goes in last.
  std::vector<std::uint64_t> mine{bytes, hash}, all(2 * static_cast<std::size_t>(world.size()));
  if (world.size() == 1)
    all = mine;
  else
    WS_MPI_CHECK(MPI_Gather(mine.data(), 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, 0, world.comm()));
  world.barrier();
  if (world.rank() == 0) {
    nlohmann::json manifest = identity(trainer.run(), data, sizeof(T));
    manifest["format"] = "weakscale-engine-checkpoint";
    manifest["version"] = kVersion;
    manifest["step"] = step;
    nlohmann::json shards = nlohmann::json::array();
    for (int r = 0; r < world.size(); ++r)
      shards.push_back({{"rank", r},
                        {"file", shard_name(r, step)},
                        {"bytes", all[2 * static_cast<std::size_t>(r)]},
                        {"fnv1a64", fmt::format("{:016x}", all[2 * static_cast<std::size_t>(r) + 1])}});
    manifest["shards"] = shards;
    const std::string path = (fs::path(dir) / kManifest).string(), temp = path + ".tmp";
    {
      std::ofstream out(temp, std::ios::trunc);
      out << manifest.dump(2) << '\n';
      out.flush();
      if (!out) problem = fmt::format("checkpoint manifest {}: write to {} failed", path, temp);
    }
    if (problem.empty()) {
      fs::rename(temp, path, ec);
      if (ec)
        problem =
            fmt::format("checkpoint manifest {}: cannot rename {} into place: {}", path, temp, ec.message());
    }
  }
  throw_if(agree(problem, world));
  // The new manifest is in place: this rank's shards of other steps are no longer referenced.
  const std::string prefix = fmt::format("rank{:05d}.step", world.rank());
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name != file) fs::remove(entry.path(), ec);
  }
}

template <class T>
void load_checkpoint(Trainer<T>& trainer, const std::string& data, const std::string& dir) {
  const Communicator& world = trainer.grid().world();
  const std::string manifest_path = (fs::path(dir) / kManifest).string();
  auto& store = trainer.model().parameters();
  const std::size_t n = store.size();
  std::vector<char> bytes;  // this rank's shard, once checked
  ShardHeader h;
  auto problem_with_manifest = [&]() -> std::string {
    std::ifstream in(manifest_path);
    if (!in) return fmt::format("--resume {}: {} is missing", dir, manifest_path);
    nlohmann::json manifest;
    try {
      manifest = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      return fmt::format("--resume {}: {} is not valid JSON ({})", dir, manifest_path, e.what());
    }
    if (manifest.value("format", "") != "weakscale-engine-checkpoint" ||
        manifest.value("version", 0) != kVersion)
      return fmt::format("--resume {}: {} is not a version-{} weakscale-engine checkpoint manifest", dir,
                         manifest_path, kVersion);
    const nlohmann::json want = identity(trainer.run(), data, sizeof(T));
    for (const auto& [key, value] : want.items())
      if (auto p = check_field(manifest, want, key); !p.empty())
        return fmt::format("--resume {}: {}: {}", dir, manifest_path, p);
    if (!manifest.contains("shards") || !manifest["shards"].is_array() ||
        manifest["shards"].size() != static_cast<std::size_t>(world.size()))
      return fmt::format("--resume {}: {}: expected {} shards", dir, manifest_path, world.size());
    const auto& entry = manifest["shards"][static_cast<std::size_t>(world.rank())];
    const std::string shard_path = (fs::path(dir) / entry.value("file", "")).string();
    const auto want_bytes = entry.value("bytes", std::uint64_t{0});
    const std::string want_hash = entry.value("fnv1a64", "");

    std::ifstream shard(shard_path, std::ios::binary);
    if (!shard) return fmt::format("--resume {}: shard {} is missing", dir, shard_path);
    bytes.assign(std::istreambuf_iterator<char>(shard), std::istreambuf_iterator<char>());
    if (bytes.size() != want_bytes)
      return fmt::format("--resume {}: shard {} is truncated or overwritten: {} bytes, the manifest says {}",
                         dir, shard_path, bytes.size(), want_bytes);
    if (fmt::format("{:016x}", fnv1a(bytes.data(), bytes.size())) != want_hash)
      return fmt::format(
          "--resume {}: shard {} is corrupt: its FNV-1a checksum differs from the manifest's {}", dir,
          shard_path, want_hash);
    if (bytes.size() < sizeof kMagic + sizeof h)
      return fmt::format("--resume {}: shard {} is shorter than its header", dir, shard_path);
    std::copy_n(bytes.data() + sizeof kMagic, sizeof h, reinterpret_cast<char*>(&h));
    const std::size_t table = static_cast<std::size_t>(h.gemm_choices) * kChoiceFields * sizeof(std::int64_t);
    if (!std::equal(kMagic, kMagic + sizeof kMagic, bytes.data()) || h.version != kVersion ||
        h.scalar_bytes != static_cast<std::int64_t>(sizeof(T)) || h.rank != world.rank() ||
        h.parameters != static_cast<std::int64_t>(n) || h.steps_done != manifest.value("step", -1LL) ||
        bytes.size() != sizeof kMagic + sizeof h + table + 3 * n * sizeof(T))
      return fmt::format(
          "--resume {}: shard {} does not match this rank (rank {}, {} parameters of {} bytes, step {})", dir,
          shard_path, world.rank(), n, sizeof(T), manifest.value("step", -1LL));
    return {};
  };
  throw_if(agree(problem_with_manifest(), world));

  // Every rank's shard checked out: restore.
  {
    const std::size_t table = static_cast<std::size_t>(h.gemm_choices) * kChoiceFields * sizeof(std::int64_t);
    const char* p = bytes.data() + sizeof kMagic + sizeof h;
    std::vector<std::int64_t> fields(static_cast<std::size_t>(h.gemm_choices) * kChoiceFields);
    std::copy_n(p, table, reinterpret_cast<char*>(fields.data()));
    p += table;
    std::map<GemmShape, GemmChoice> choices;
    for (std::size_t i = 0; i < fields.size(); i += kChoiceFields) {
      const GemmShape shape{static_cast<Op>(fields[i]), static_cast<Op>(fields[i + 1]),
                            static_cast<int>(fields[i + 2]), static_cast<int>(fields[i + 3]),
                            static_cast<int>(fields[i + 4])};
      choices[shape] = GemmChoice{static_cast<GemmVariant>(fields[i + 5]), 0, 0};
    }
    trainer.tuner().adopt(choices);
    for (std::vector<T>* target :
         {&store.values(), &trainer.optimizer().first_moment(), &trainer.optimizer().second_moment()}) {
      std::copy_n(p, n * sizeof(T), reinterpret_cast<char*>(target->data()));
      p += n * sizeof(T);
    }
    trainer.optimizer().set_steps(h.optimizer_steps);
    trainer.set_steps_done(h.steps_done);
  }
}

template void save_checkpoint<float>(const Trainer<float>&, const std::string&, const std::string&);
template void save_checkpoint<double>(const Trainer<double>&, const std::string&, const std::string&);
template void load_checkpoint<float>(Trainer<float>&, const std::string&, const std::string&);
template void load_checkpoint<double>(Trainer<double>&, const std::string&, const std::string&);

}  // namespace ws
