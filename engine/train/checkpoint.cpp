#include "engine/train/checkpoint.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/fnv1a.hpp"
#include "base/output_file.hpp"
#include "engine/comm/mpi_check.hpp"
#include "engine/train/checkpoint_format.hpp"

namespace ws {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "manifest.json";
constexpr std::size_t kMessageBytes = 2048;
// A manifest lists one small entry per rank: 16 MiB holds far more ranks than any job has.
constexpr std::uintmax_t kMaxManifestBytes = 16u << 20;

nlohmann::json identity(const RunConfig& run, const std::string& data, std::size_t scalar_bytes) {
  const ModelSpec& m = run.model;
  nlohmann::json model{{"layers", m.layers},
                       {"hidden", m.hidden},
                       {"heads", m.heads},
                       {"seq", m.sequence_length},
                       {"vocab", m.vocabulary}};
  // The architecture where it is not GPT-2's: a checkpoint of one family does not resume the other.
  if (!m.gpt_style()) model["architecture"] = architecture_summary(m);
  return {{"model", model},
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

// Flushes a file's (or directory's) data to the device: a checkpoint whose manifest survives a
// power cut must find its shards there too. Returns "" or the problem.
std::string sync_to_disk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open {} to sync it: {}", path, std::strerror(errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) return fmt::format("fsync of {} failed: {}", path, std::strerror(error));
  return {};
}

void throw_if(const std::string& message) {
  if (!message.empty()) throw CheckpointError(message);
}

// A checkpoint file being written: a StagedFile's fresh, exclusively created temporary beside
// the target (a link planted at the target or at any predictable name is never followed), opened
// without following a link, checksummed as it is written.
class CheckpointWriter {
 public:
  explicit CheckpointWriter(const std::string& path) : staged_(path) {
    fd_ = ::open(staged_.temporary().c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) failure_ = fmt::format("cannot open {}: {}", staged_.temporary().string(), std::strerror(errno));
  }
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;
  ~CheckpointWriter() {
    if (fd_ >= 0) ::close(fd_);
  }

  void write(const void* data, std::size_t bytes) {
    hash_ = fnv1a64(data, bytes, hash_);
    const char* p = static_cast<const char*>(data);
    while (failure_.empty() && bytes > 0) {
      const ssize_t n = ::write(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failure_ = fmt::format("write to {} failed: {}", staged_.temporary().string(),
                               std::strerror(n < 0 ? errno : EIO));
        return;
      }
      p += n, bytes -= static_cast<std::size_t>(n), written_ += static_cast<std::uint64_t>(n);
    }
  }

  // Syncs the data to the device, then renames the file into place (a manifest that survives a
  // power cut must find its shards there, complete); returns "" or what went wrong. The
  // directory entry is synced by the caller, once for all files.
  std::string commit() {
    if (!failure_.empty()) return failure_;
    if (::fsync(fd_) != 0) return fmt::format("fsync of {} failed: {}", staged_.temporary().string(), std::strerror(errno));
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) return fmt::format("closing {} failed: {}", staged_.temporary().string(), std::strerror(errno));
    try {
      staged_.commit();
    } catch (const OutputError& e) {
      return e.what();
    }
    return {};
  }

  std::uint64_t bytes() const { return written_; }
  std::uint64_t hash() const { return hash_; }

 private:
  StagedFile staged_;
  int fd_ = -1;
  std::string failure_;
  std::uint64_t written_ = 0;
  std::uint64_t hash_ = kFnv1aOffset;
};

// Writes the shard file `path` (through a staged temporary and a rename); returns "" or what
// went wrong.
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
  try {
    CheckpointWriter out(path);
    out.write(kCheckpointMagic, sizeof kCheckpointMagic);
    out.write(&h, sizeof h);
    out.write(table.data(), table.size() * sizeof(std::int64_t));
    out.write(store.values().data(), store.size() * sizeof(T));
    // The moments: one per parameter, or per element of this rank's shards (distributed optimizer).
    const std::size_t moments = trainer.optimizer().first_moment().size() * sizeof(T);
    out.write(trainer.optimizer().first_moment().data(), moments);
    out.write(trainer.optimizer().second_moment().data(), moments);
    if (auto p = out.commit(); !p.empty()) return fmt::format("checkpoint shard {}: {}", path, p);
    bytes = out.bytes();
    hash = out.hash();
  } catch (const OutputError& e) {
    return fmt::format("checkpoint shard {}: {}", path, e.what());
  }
  return {};
}

// Writes the manifest file `path` like a shard; returns "" or what went wrong.
std::string write_manifest(const nlohmann::json& manifest, const std::string& path) {
  const std::string text = manifest.dump(2) + "\n";
  try {
    CheckpointWriter out(path);
    out.write(text.data(), text.size());
    if (auto p = out.commit(); !p.empty()) return fmt::format("checkpoint manifest {}: {}", path, p);
  } catch (const OutputError& e) {
    return fmt::format("checkpoint manifest {}: {}", path, e.what());
  }
  return {};
}

// Whether `name` in a checkpoint directory is a half-written file that `rank` of a job of
// `ranks` ranks removes before it writes: its own shards' temporaries (".rank00003.step....tmp",
// or "rank00003.step....tmp" of older engines), on rank 0 also the manifest's and those of ranks
// this job does not have (an earlier job with more ranks). Another rank's live temporaries are
// never matched.
bool is_stale_temporary(const std::string& name, int rank, int ranks) {
  if (!name.ends_with(".tmp")) return false;
  const std::string bare = name.starts_with('.') ? name.substr(1) : name;
  if (rank == 0 && bare.starts_with(std::string(kManifest) + ".")) return true;
  int owner = -1;
  if (std::sscanf(bare.c_str(), "rank%5d.step", &owner) != 1 || !bare.starts_with("rank")) return false;
  return owner == rank || (rank == 0 && owner >= ranks);
}

}  // namespace

template <class T>
void save_checkpoint(Trainer<T>& trainer, const std::string& data, const std::string& dir) {
  const Communicator& world = trainer.grid().world();
  trainer.gather_parameters();
  const long long step = trainer.steps_done();
  std::string problem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) problem = fmt::format("--checkpoint-dir {}: cannot create the directory: {}", dir, ec.message());
  throw_if(agree(problem, world));
  // What a killed writer left behind: half-written shards and manifest (see is_stale_temporary).
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (is_stale_temporary(entry.path().filename().string(), world.rank(), world.size()))
      fs::remove(entry.path(), ec);
  }

  const std::string file = shard_file_name(world.rank(), step);
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
  // Every shard is on disk (synced, renamed) before the directory entries are synced and the
  // manifest that names them is written.
  problem = sync_to_disk(dir);
  throw_if(agree(problem.empty() ? problem : "--checkpoint-dir " + problem, world));
  if (world.rank() == 0) {
    nlohmann::json manifest = identity(trainer.run(), data, sizeof(T));
    manifest["format"] = "weakscale-engine-checkpoint";
    manifest["version"] = kCheckpointVersion;
    manifest["step"] = step;
    nlohmann::json shards = nlohmann::json::array();
    for (int r = 0; r < world.size(); ++r)
      shards.push_back({{"rank", r},
                        {"file", shard_file_name(r, step)},
                        {"bytes", all[2 * static_cast<std::size_t>(r)]},
                        {"fnv1a64", fmt::format("{:016x}", all[2 * static_cast<std::size_t>(r) + 1])}});
    manifest["shards"] = shards;
    problem = write_manifest(manifest, (fs::path(dir) / kManifest).string());
    if (problem.empty()) problem = sync_to_disk(dir);
  }
  throw_if(agree(problem, world));
  // The new manifest is in place: this rank's shards of other steps are no longer referenced, and
  // rank 0 removes shards no rank of this job writes (an earlier job with more ranks).
  const std::string own = fmt::format("rank{:05d}.step", world.rank());
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("rank") || !name.ends_with(".bin") || name == file) continue;
    if (name.starts_with(own)) {
      fs::remove(entry.path(), ec);
    } else if (world.rank() == 0) {
      int owner = -1;
      if (std::sscanf(name.c_str(), "rank%5d.step", &owner) == 1 && owner >= world.size()) fs::remove(entry.path(), ec);
    }
  }
}

template <class T>
void load_checkpoint(Trainer<T>& trainer, const std::string& data, const std::string& dir) {
  const Communicator& world = trainer.grid().world();
  const std::string manifest_path = (fs::path(dir) / kManifest).string();
  auto& store = trainer.model().parameters();
  const std::size_t n = store.size();
  const std::size_t moments = trainer.optimizer().first_moment().size();
  std::vector<char> bytes;  // this rank's shard, once checked
  ShardHeader h;
  std::vector<std::int64_t> choice_fields;
  auto problem_with_manifest = [&]() -> std::string {
    std::error_code ec;
    if (!fs::exists(manifest_path, ec)) return fmt::format("--resume {}: {} is missing", dir, manifest_path);
    // A device or FIFO planted as the manifest would never end the read; a huge file is no manifest.
    if (!fs::is_regular_file(manifest_path, ec) || fs::file_size(manifest_path, ec) > kMaxManifestBytes)
      return fmt::format("--resume {}: {} is not a regular file of at most {} bytes", dir, manifest_path,
                         kMaxManifestBytes);
    std::ifstream in(manifest_path);
    if (!in) return fmt::format("--resume {}: {} is missing", dir, manifest_path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ShardEntry entry;
    if (auto p = check_manifest(text, manifest_path, identity(trainer.run(), data, sizeof(T)), world.size(),
                                world.rank(), entry);
        !p.empty())
      return fmt::format("--resume {}: {}", dir, p);
    const std::string shard_path = (fs::path(dir) / entry.file).string();
    if (!fs::is_regular_file(shard_path, ec)) return fmt::format("--resume {}: shard {} is missing", dir, shard_path);
    // The size first: a shard of another size is not read into memory at all.
    if (const auto size = fs::file_size(shard_path, ec); !ec && size != entry.bytes)
      return fmt::format("--resume {}: shard {} is truncated or overwritten: {} bytes, the manifest says {}",
                         dir, shard_path, size, entry.bytes);
    std::ifstream shard(shard_path, std::ios::binary);
    if (!shard) return fmt::format("--resume {}: shard {} is missing", dir, shard_path);
    bytes.assign(std::istreambuf_iterator<char>(shard), std::istreambuf_iterator<char>());
    if (bytes.size() != entry.bytes)
      return fmt::format("--resume {}: shard {} is truncated or overwritten: {} bytes, the manifest says {}",
                         dir, shard_path, bytes.size(), entry.bytes);
    if (fmt::format("{:016x}", fnv1a64(bytes.data(), bytes.size())) != entry.fnv1a64)
      return fmt::format(
          "--resume {}: shard {} is corrupt: its FNV-1a checksum differs from the manifest's {}", dir,
          shard_path, entry.fnv1a64);
    const ShardExpectation want{static_cast<std::int64_t>(sizeof(T)), world.rank(), static_cast<std::int64_t>(n),
                                entry.step, static_cast<std::int64_t>(moments)};
    if (auto p = check_shard(bytes, shard_path, want, h, choice_fields); !p.empty())
      return fmt::format("--resume {}: {} (this rank: {}, {} parameters of {} bytes, step {})", dir, p,
                         world.rank(), n, sizeof(T), entry.step);
    return {};
  };
  throw_if(agree(problem_with_manifest(), world));

  // Every rank's shard checked out: restore.
  {
    const std::vector<std::int64_t>& fields = choice_fields;
    const char* p = bytes.data() + sizeof kCheckpointMagic + sizeof h + fields.size() * sizeof(std::int64_t);
    std::map<GemmShape, GemmChoice> choices;
    for (std::size_t i = 0; i < fields.size(); i += kGemmChoiceFields) {
      const GemmShape shape{static_cast<Op>(fields[i]), static_cast<Op>(fields[i + 1]),
                            static_cast<int>(fields[i + 2]), static_cast<int>(fields[i + 3]),
                            static_cast<int>(fields[i + 4])};
      choices[shape] = GemmChoice{static_cast<GemmVariant>(fields[i + 5]), 0, 0};
    }
    trainer.tuner().adopt(choices);
    for (std::vector<T>* target :
         {&store.values(), &trainer.optimizer().first_moment(), &trainer.optimizer().second_moment()}) {
      std::copy_n(p, target->size() * sizeof(T), reinterpret_cast<char*>(target->data()));
      p += target->size() * sizeof(T);
    }
    trainer.adopt_parameters();  // the distributed optimizer's shards start from them
    trainer.optimizer().set_steps(h.optimizer_steps);
    trainer.set_steps_done(h.steps_done);
  }
}

template void save_checkpoint<float>(Trainer<float>&, const std::string&, const std::string&);
template void save_checkpoint<double>(Trainer<double>&, const std::string&, const std::string&);
template void load_checkpoint<float>(Trainer<float>&, const std::string&, const std::string&);
template void load_checkpoint<double>(Trainer<double>&, const std::string&, const std::string&);

}  // namespace ws
