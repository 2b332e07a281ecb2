// Run under mpiexec with N ranks. Sharded checkpoints: 3 steps + checkpoint + resume 3 steps gives
// the 6-step run bit for bit (losses, parameters, AdamW moments); every broken checkpoint (missing,
// truncated, corrupt, mismatched) fails on every rank with a message naming the file; saving
// leaves no temporary files and no stale shards. Also activation recomputation == storing, bit for
// bit, on the same layout, and the timeline attributes collectives to the right communicator.
#include "base/fnv1a.hpp"
#include "engine/train/checkpoint.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/train/trainer.hpp"

namespace ws {
namespace {

namespace fs = std::filesystem;

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Z-sharded when possible (exercises all-gathers, reduce-scatters and the data x Z group).
Layout layout_for(int ranks) { return ranks % 2 == 0 ? Layout{ranks / 2, 1, 1, 2} : Layout{ranks, 1, 1, 1}; }

RunConfig small_run(bool tune) {
  RunConfig run;
  run.model = ModelSpec{"tiny", 2, 16, 4, 8, 32, 1};
  run.layout = layout_for(world_size());
  run.batch_sequences = 8;
  run.seed = 5;
  run.optimizer.learning_rate = 1e-2;
  run.tune_gemm = tune;
  return run;
}

// A fresh directory shared by all ranks.
std::string shared_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "weakscale_ckpt_" + name;
  if (world_rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Checkpoint, ThreePlusResumedThreeEqualsSixBitForBit) {
  const RunConfig run = small_run(false);
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  const ProcessGrid grid(MPI_COMM_WORLD, run.layout);
  const std::string dir = shared_dir("resume");

  Trainer<float> straight(run, grid, source);
  std::vector<double> straight_losses;
  for (int s = 0; s < 6; ++s) straight_losses.push_back(straight.step().loss);

  {
    Trainer<float> first(run, grid, source);
    for (int s = 0; s < 3; ++s)
      EXPECT_TRUE(same_bits(first.step().loss, straight_losses[s])) << "step " << s + 1;
    save_checkpoint(first, "synthetic", dir);
  }
  Trainer<float> resumed(run, grid, source);
  load_checkpoint(resumed, "synthetic", dir);
  EXPECT_EQ(resumed.steps_done(), 3);
  for (int s = 3; s < 6; ++s) {
    const StepResult r = resumed.step();
    EXPECT_EQ(r.step, s + 1);
    EXPECT_TRUE(same_bits(r.loss, straight_losses[s]))
        << "step " << s + 1 << ": " << r.loss << " vs " << straight_losses[s];
  }
  EXPECT_TRUE(same_bits(resumed.model().parameters().values(), straight.model().parameters().values()));
  EXPECT_TRUE(same_bits(resumed.optimizer().first_moment(), straight.optimizer().first_moment()));
  EXPECT_TRUE(same_bits(resumed.optimizer().second_moment(), straight.optimizer().second_moment()));
  EXPECT_EQ(resumed.optimizer().steps(), straight.optimizer().steps());
}

// With GEMM tuning on, the variants are part of the state: the resumed run adopts the saved
// choices and continues exactly as the run that saved them.
TEST(Checkpoint, ResumedRunKeepsTunedGemmChoices) {
  const RunConfig run = small_run(true);
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  const ProcessGrid grid(MPI_COMM_WORLD, run.layout);
  const std::string dir = shared_dir("tuned");
  Trainer<double> original(run, grid, source);
  for (int s = 0; s < 2; ++s) original.step();
  save_checkpoint(original, "synthetic", dir);
  Trainer<double> resumed(run, grid, source);
  load_checkpoint(resumed, "synthetic", dir);
  ASSERT_EQ(resumed.tuner().choices().size(), original.tuner().choices().size());
  for (const auto& [shape, choice] : original.tuner().choices()) {
    ASSERT_TRUE(resumed.tuner().choices().contains(shape));
    EXPECT_EQ(resumed.tuner().choices().at(shape).variant, choice.variant);
  }
  for (int s = 0; s < 2; ++s) EXPECT_TRUE(same_bits(original.step().loss, resumed.step().loss));
  EXPECT_TRUE(same_bits(resumed.model().parameters().values(), original.model().parameters().values()));
}

TEST(Checkpoint, SavingLeavesNoTemporaryFilesAndNoStaleShards) {
  const RunConfig run = small_run(false);
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  const ProcessGrid grid(MPI_COMM_WORLD, run.layout);
  const std::string dir = shared_dir("files");
  Trainer<float> trainer(run, grid, source);
  trainer.step();
  save_checkpoint(trainer, "synthetic", dir);
  trainer.step();
  save_checkpoint(trainer, "synthetic", dir);
  MPI_Barrier(MPI_COMM_WORLD);
  int shards = 0, manifests = 0, others = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "manifest.json")
      ++manifests;
    else if (name.find(".step00000002.bin") != std::string::npos && name.ends_with(".bin"))
      ++shards;
    else
      ++others;  // a .tmp or a step-1 shard
  }
  EXPECT_EQ(manifests, 1);
  EXPECT_EQ(shards, world_size());
  EXPECT_EQ(others, 0);
}

// Each broken checkpoint: the load throws on EVERY rank, with the same message naming the file
// and the problem, and leaves the trainer untouched.
class BrokenCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = small_run(false);
    dir_ = shared_dir("broken");
    const SyntheticTokens source(run_.seed, run_.model.vocabulary);
    const ProcessGrid grid(MPI_COMM_WORLD, run_.layout);
    Trainer<float> trainer(run_, grid, source);
    trainer.step();
    save_checkpoint(trainer, "synthetic", dir_);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // The last rank's shard: the damage is seen by one rank, the error by all.
  std::string last_shard() const {
    char name[64];
    std::snprintf(name, sizeof name, "rank%05d.step%08d.bin", world_size() - 1, 1);
    return dir_ + "/" + name;
  }
  // Rank 0 damages, then every rank tries to load into a fresh trainer of `run`.
  void expect_failure(const RunConfig& run, const std::string& want_file, const std::string& want_words) {
    const SyntheticTokens source(run.seed, run.model.vocabulary);
    const ProcessGrid grid(MPI_COMM_WORLD, run.layout);
    Trainer<float> trainer(run, grid, source);
    const std::vector<float> before = trainer.model().parameters().values();
    std::string message;
    try {
      load_checkpoint(trainer, "synthetic", dir_);
    } catch (const CheckpointError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(want_file), std::string::npos) << "message: '" << message << "'";
    EXPECT_NE(message.find(want_words), std::string::npos) << "message: '" << message << "'";
    EXPECT_EQ(trainer.steps_done(), 0);
    EXPECT_TRUE(same_bits(trainer.model().parameters().values(), before));
    // Every rank got the same message.
    unsigned long long hash = fnv1a64(message.data(), message.size()), low = hash, high = hash;
    MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(low, high);
  }
  void on_rank0(const std::function<void()>& damage) {
    if (world_rank() == 0) damage();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  RunConfig run_;
  std::string dir_;
};

TEST_F(BrokenCheckpoint, MissingManifest) {
  on_rank0([&] { fs::remove(dir_ + "/manifest.json"); });
  expect_failure(run_, dir_ + "/manifest.json", "is missing");
}

TEST_F(BrokenCheckpoint, MissingDirectory) {
  on_rank0([&] { fs::remove_all(dir_); });
  expect_failure(run_, dir_ + "/manifest.json", "is missing");
}

TEST_F(BrokenCheckpoint, MissingShard) {
  on_rank0([&] { fs::remove(last_shard()); });
  expect_failure(run_, last_shard(), "is missing");
}

TEST_F(BrokenCheckpoint, TruncatedShard) {
  on_rank0([&] { fs::resize_file(last_shard(), fs::file_size(last_shard()) - 100); });
  expect_failure(run_, last_shard(), "truncated");
}

TEST_F(BrokenCheckpoint, CorruptShard) {
  on_rank0([&] {
    std::fstream f(last_shard(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  });
  expect_failure(run_, last_shard(), "checksum");
}

TEST_F(BrokenCheckpoint, CorruptManifest) {
  on_rank0([&] { std::ofstream(dir_ + "/manifest.json") << "{ \"format\": "; });
  expect_failure(run_, dir_ + "/manifest.json", "not valid JSON");
}

TEST_F(BrokenCheckpoint, OtherModel) {
  RunConfig other = run_;
  other.model.layers = 3;
  expect_failure(other, dir_ + "/manifest.json", "model");
}

TEST_F(BrokenCheckpoint, OtherLayout) {
  if (world_size() < 2) GTEST_SKIP() << "one rank has one layout";
  RunConfig other = run_;
  other.layout = Layout{world_size(), 1, 1, 1};
  expect_failure(other, dir_ + "/manifest.json", "layout");
}

TEST_F(BrokenCheckpoint, OtherSeed) {
  RunConfig other = run_;
  other.seed = 99;
  expect_failure(other, dir_ + "/manifest.json", "seed");
}

// Recomputing the activations runs the very same kernels and collectives: same bits.
TEST(Recompute, SameLossesAndParametersAsStoredActivations) {
  RunConfig run = small_run(false);
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  const ProcessGrid grid(MPI_COMM_WORLD, run.layout);
  Trainer<float> stored(run, grid, source);
  run.schedule.recompute = true;
  Trainer<float> recomputed(run, grid, source);
  for (int s = 0; s < 3; ++s)
    EXPECT_TRUE(same_bits(stored.step().loss, recomputed.step().loss)) << "step " << s + 1;
  EXPECT_TRUE(same_bits(stored.model().parameters().values(), recomputed.model().parameters().values()));
}

// The timeline: bytes and counts land on the group that was used; a non-blocking collective is
// in flight at least as long as it was waited for; everything issued completes.
TEST(Timeline, AttributesCollectivesToTheirGroup) {
  const Layout layout = layout_for(world_size());
  const ProcessGrid grid(MPI_COMM_WORLD, layout);
  Timeline& t = grid.timeline();
  t.set_tracing(true);
  const TimelineTotals before = t.totals();
  std::vector<float> data(1000, 1.0f);
  grid.group(CommGroup::data).all_reduce_sum(data.data(), data.size());
  Request r = grid.batch_group().iall_reduce_sum(data.data(), data.size());
  r.wait();
  const TimelineTotals d = difference(t.totals(), before);
  const auto& data_group = d[static_cast<std::size_t>(CommGroup::data)];
  const auto& batch_group = d[static_cast<std::size_t>(CommGroup::data_z)];
  const bool data_used = layout.data > 1, batch_used = layout.data * layout.z > 1;
  EXPECT_EQ(data_group.collectives, data_used ? 1 : 0);
  EXPECT_EQ(data_group.bytes, data_used ? 4000u : 0u);
  EXPECT_EQ(batch_group.collectives, batch_used ? 1 : 0);
  EXPECT_EQ(batch_group.non_blocking, batch_used ? 1 : 0);
  EXPECT_GE(batch_group.in_flight, batch_group.waited);
  // Starting the non-blocking one took time inside MPI; the blocking one counts none as progress.
  EXPECT_EQ(batch_group.progress > Time::zero(), batch_used);
  EXPECT_EQ(data_group.progress, Time::zero());
  EXPECT_EQ(t.in_flight(), 0);
  EXPECT_FLOAT_EQ(
      data[0], static_cast<float>((data_used ? layout.data : 1) * (batch_used ? layout.data * layout.z : 1)));
  for (int g : {0, 1, 2, 5})
    EXPECT_EQ(d[static_cast<std::size_t>(g)].collectives, 0) << to_string(static_cast<CommGroup>(g));
}

}  // namespace
}  // namespace ws
