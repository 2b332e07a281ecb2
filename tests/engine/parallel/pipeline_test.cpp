// Run under mpiexec with N ranks: every pipeline layout of N ranks (tests/engine/accepted_layouts.hpp:
// pp = 2, 4, 8 stages; one micro-batch, 2 pp micro-batches, the interleaved schedule; data or X
// parallel within a stage) trains an 8-block tiny GPT and Llama five steps to the 1-rank run's
// losses, and every parameter a stage holds equals the serial run's element its shard map names.
// The stages together hold the whole model once (the last stage's copy of the tied embedding
// aside, which is left out of the gradient norm).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/train/memorization.hpp"
#include "engine/train/trainer.hpp"
#include "tests/engine/accepted_layouts.hpp"
#include "tests/engine/serial_run.hpp"
#include "tests/engine/tiny_models.hpp"

namespace ws {
namespace {

constexpr int kLayers = 8;

struct Variant {
  bool llama = false;
  bool overlap = true;
  bool recompute = false;
  GoldfishOptions goldfish{};
};

std::string describe(const Layout& layout, const Variant& v) {
  return to_string(layout) + (v.llama ? " llama" : " gpt") + (v.overlap ? " overlap" : " no-overlap") +
         (v.recompute ? " recompute" : "") + (v.goldfish.enabled() ? " goldfish" : "");
}

RunConfig pipeline_run(const Layout& layout, const Variant& v) {
  RunConfig run;
  run.model = v.llama ? tiny_llama() : tiny_gpt();
  run.model.layers = kLayers;
  run.layout = layout;
  run.batch_sequences = 16;
  run.seed = 7;
  run.optimizer.learning_rate = 1e-2;
  run.optimizer.clip_norm = 0.5;  // clipping on: the norm must be summed over the stages
  run.schedule.overlap_data_parallel = run.schedule.overlap_all_reduce = v.overlap;
  run.schedule.overlap_reduce_scatter = run.schedule.overlap_all_gather = v.overlap;
  run.schedule.recompute = v.recompute;
  run.goldfish = v.goldfish;
  return run;
}

struct Differences {
  double loss = 0, norm = 0, parameters = 0;
  std::string worst_tensor;
  int tensors = 0, missing = 0;  // this rank's tensors counted in the norm; those the serial run lacks
};

template <class T>
SerialRun<T>& serial_run(const Variant& v) {
  return cached_serial_run<T>(describe(Layout{}, v), pipeline_run(Layout{}, v), 5);
}

template <class T>
Differences compare_with_serial(const Layout& layout, const Variant& v) {
  const RunConfig run = pipeline_run(layout, v);
  validate_run(run, layout.devices());
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  const ProcessGrid grid(MPI_COMM_WORLD, layout);
  Trainer<T> parallel(run, grid, source);
  SerialRun<T>& reference = serial_run<T>(v);
  Trainer<T>& serial = reference.trainer;
  Differences d;
  for (int s = 0; s < 5; ++s) {
    const StepResult p = parallel.step(), &q = reference.step(s);
    // A loss of zero would make every difference zero: both are cross-entropies of random tokens.
    EXPECT_GT(q.loss, 1.0) << describe(layout, v);
    EXPECT_GT(p.loss, 1.0) << describe(layout, v);
    d.loss = std::max(d.loss, std::fabs(p.loss - q.loss) / std::fabs(q.loss));
    d.norm = std::max(d.norm, std::fabs(p.grad_norm - q.grad_norm) / q.grad_norm);
  }
  parallel.gather_parameters();  // the distributed optimizer's last update, still on its shards
  const auto& p = parallel.model().parameters();
  const auto& q = serial.model().parameters();
  for (const TensorInfo& local : p.tensors()) {
    if (local.in_norm) ++d.tensors;
    const TensorInfo* full = q.find(local.name);
    if (full == nullptr) {
      ++d.missing;
      continue;
    }
    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < full->tensor.size; ++i)
      scale = std::max(scale, std::fabs(static_cast<double>(q.value(full->tensor)[i])));
    for (std::size_t i = 0; i < local.tensor.size; ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(p.value(local.tensor)[i]) -
                                        static_cast<double>(q.value(full->tensor)[local.shard.global_index(i)])));
    if (worst / scale > d.parameters) d.parameters = worst / scale, d.worst_tensor = local.name;
  }
  // Over the stages of this grid position: the whole model once.
  int held = d.tensors;
  MPI_Allreduce(MPI_IN_PLACE, &held, 1, MPI_INT, MPI_SUM, grid.group(CommGroup::pipeline).comm());
  d.tensors = held - static_cast<int>(q.tensors().size());  // 0 when the stages hold it once
  if (grid.rank() == 0)
    std::printf("%s (%zu-byte): loss difference %.3g, norm %.3g, parameters %.3g (%s)\n", describe(layout, v).c_str(),
                sizeof(T), d.loss, d.norm, d.parameters, d.worst_tensor.c_str());
  return d;
}

// The strategies' equality: within 1e-9 of the serial run in double (losses, norm, every parameter,
// no tensor the serial model lacks) and 1e-5 on the losses in fp32.
void expect_matches_serial(const Layout& layout, const Variant& v) {
  const Differences d = compare_with_serial<double>(layout, v);
  EXPECT_LE(d.loss, 1e-9) << describe(layout, v);
  EXPECT_LE(d.norm, 1e-9) << describe(layout, v);
  EXPECT_LE(d.parameters, 1e-9) << describe(layout, v) << " " << d.worst_tensor;
  EXPECT_EQ(d.missing, 0) << describe(layout, v);
  const Differences f = compare_with_serial<float>(layout, v);
  EXPECT_LE(f.loss, 1e-5) << describe(layout, v);
}

std::vector<Layout> layouts() {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return pipeline_layouts(ranks, kLayers);
}

// In double only summation order differs (gradients accumulate over micro-batches, the tied
// embedding's two halves add across stages): far below the 1e-5.
TEST(PipelineLayouts, FiveStepsMatchTheSerialRunInDouble) {
  const auto all = layouts();
  ASSERT_FALSE(all.empty());
  for (const Layout& layout : all)
    for (const Variant& v : {Variant{false, true, false, {}}, Variant{false, false, true, {}},
                             Variant{true, true, false, {}}, Variant{false, true, false, GoldfishOptions{2, 2}}}) {
      const Differences d = compare_with_serial<double>(layout, v);
      EXPECT_LE(d.loss, 1e-9) << describe(layout, v);
      EXPECT_LE(d.norm, 1e-9) << describe(layout, v);
      EXPECT_LE(d.parameters, 1e-9) << describe(layout, v) << " " << d.worst_tensor;
      EXPECT_EQ(d.missing, 0) << describe(layout, v);
      EXPECT_EQ(d.tensors, 0) << describe(layout, v) << ": stages hold more or fewer tensors than the model";
    }
}

// fp32: the 1e-5 on the losses; parameters to 5e-3 of each tensor's scale, as for the 4D
// layouts (tests/engine/parallel/layouts_test.cpp says why Adam amplifies rounding noise).
TEST(PipelineLayouts, FiveStepsMatchTheSerialRunInFloat) {
  for (const Layout& layout : layouts())
    for (const Variant& v : {Variant{false, true, false, {}}, Variant{true, true, true, {}}}) {
      const Differences d = compare_with_serial<float>(layout, v);
      EXPECT_LE(d.loss, 1e-5) << describe(layout, v);
      EXPECT_LE(d.parameters, 5e-3) << describe(layout, v) << " " << d.worst_tensor;
    }
}

// Megatron-LM's tp x pp x dp and FSDP / HSDP with tp: the vocabulary-parallel embedding, LM head
// and loss (row maxima and sums over Y) with and without stages; the Llama where its 2 K/V heads
// split over the tp.
TEST(VocabularyParallelLayouts, FiveStepsMatchTheSerialRun) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const auto all = vocabulary_parallel_layouts(ranks, kLayers);
  if (ranks >= 2) {
    ASSERT_FALSE(all.empty());
  }
  for (const Layout& layout : all)
    for (const Variant& v : {Variant{false, true, false, {}}, Variant{false, false, true, GoldfishOptions{2, 2}},
                             Variant{true, true, false, {}}}) {
      try {
        validate_run(pipeline_run(layout, v), ranks);
      } catch (const InputError&) {
        continue;  // the Llama's 2 K/V heads over tp = 4
      }
      expect_matches_serial(layout, v);
    }
}

// Megatron-LM's sequence parallelism: the residual stream and the norms on 1/tp of the tokens,
// column-parallel layers all-gathering their input, row-parallel ones (and the embedding)
// reduce-scattering their output, the LM head gathering the final norm's rows, and the norms'
// gradients summed over tp once per step; with stages (1F1B, interleaved) and the distributed
// optimizer.
TEST(SequenceParallelLayouts, FiveStepsMatchTheSerialRun) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const auto all = sequence_parallel_layouts(ranks, kLayers);
  if (ranks >= 2) {
    ASSERT_FALSE(all.empty());
  }
  int compared = 0;
  for (const Layout& layout : all)
    for (const Variant& v : {Variant{false, true, false, {}}, Variant{false, false, true, GoldfishOptions{2, 2}},
                             Variant{true, true, false, {}}, Variant{true, false, true, {}}}) {
      try {
        validate_run(pipeline_run(layout, v), ranks);
      } catch (const InputError&) {
        continue;  // the Llama's 2 K/V heads over tp = 4
      }
      ++compared;
      expect_matches_serial(layout, v);
    }
  if (ranks >= 2) {
    EXPECT_GT(compared, 0);
  }
}

// Megatron-LM's other rank order (--use-tp-pp-dp-mapping: a replica's stages side by side, the
// data-parallel peers a whole replica apart): the stages find their peers, and the data-parallel
// and tensor-parallel groups theirs, wherever the order puts them.
TEST(RankOrders, StagesInsideTheDataRanksMatchTheSerialRun) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<std::string> spellings;
  if (ranks >= 4) {
    const std::string dp = std::to_string(ranks / 2);
    spellings.push_back("tp=1,pp=2,dp=" + dp + ",mb=4,order=tp-pp-dp");
    spellings.push_back("tp=1,pp=2,vpp=2,dp=" + dp + ",mb=2,order=tp-pp-dp");
  }
  if (ranks >= 8) spellings.push_back("tp=2,pp=2,dp=" + std::to_string(ranks / 4) + ",mb=4,sp,order=tp-pp-dp");
  for (const std::string& text : spellings) {
    const Layout layout = *parse_layout(text);
    ASSERT_EQ(layout.order, RankOrder::stages_inside_data) << text;
    for (const Variant& v : {Variant{false, true, false, {}}, Variant{true, false, true, {}}}) {
      const Differences d = compare_with_serial<double>(layout, v);
      EXPECT_LE(d.loss, 1e-9) << describe(layout, v);
      EXPECT_LE(d.norm, 1e-9) << describe(layout, v);
      EXPECT_LE(d.parameters, 1e-9) << describe(layout, v) << " " << d.worst_tensor;
      EXPECT_EQ(d.tensors, 0) << describe(layout, v);
    }
  }
}

// Megatron-LM's distributed optimizer (zero=1): gradients reduce-scattered over the data-parallel
// group (buckets padded to its ranks), AdamW on each rank's shard, parameters all-gathered after
// the update or, with the overlap, bucket by bucket ahead of the next step's forward; without and
// with tp and stages (1F1B and interleaved; the GPT's tied embedding in a bucket of its own, whose
// reduce-scattered shards the first and last stage sum). ZeRO-2 runs the same step; ZeRO-3 shards
// the parameters over the data ranks (the grid's Z: gathered per layer, gradients reduce-scattered).
TEST(DistributedOptimizer, FiveStepsMatchTheSerialRun) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<std::string> spellings;
  if (ranks >= 2)
    for (const char* zero : {",zero=1", ",zero=2", ",zero=3"}) spellings.push_back("tp=1,dp=" + std::to_string(ranks) + zero);
  if (ranks >= 4) {
    spellings.push_back("tp=2,dp=" + std::to_string(ranks / 2) + ",zero=1");
    spellings.push_back("tp=2,dp=" + std::to_string(ranks / 2) + ",zero=3");
    spellings.push_back("tp=1,pp=2,dp=" + std::to_string(ranks / 2) + ",mb=2,zero=1");
    spellings.push_back("tp=1,pp=2,vpp=2,dp=" + std::to_string(ranks / 2) + ",mb=2,zero=1");
  }
  if (ranks >= 8) spellings.push_back("tp=1,pp=4,dp=" + std::to_string(ranks / 4) + ",mb=4,zero=1");
  for (const std::string& text : spellings) {
    const Layout layout = *parse_layout(text);
    for (const Variant& v : {Variant{true, true, false, {}}, Variant{true, false, false, GoldfishOptions{2, 2}},
                             Variant{false, true, true, {}}, Variant{false, false, false, {}}}) {
      if (!v.llama && !v.overlap && !layout.pipelined()) continue;  // the GPT's stages without the overlap
      expect_matches_serial(layout, v);
    }
  }
}

// Evaluation under the distributed optimizer (its last update gathered first, as the engine's
// --eval-memorization does): after 5 steps, the same greedy continuations and the same loss on
// the training text as the 1-rank run's.
TEST(DistributedOptimizer, MemorizationMatchesTheSerialRun) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks < 2) GTEST_SKIP() << "one rank has no distributed optimizer";
  for (const char* zero : {",zero=1", ",zero=2"}) {
    const Layout layout = *parse_layout("tp=1,dp=" + std::to_string(ranks) + zero);
    ASSERT_TRUE(layout.sharded_optimizer());
    const Variant v{false, true, false, {}};
    const RunConfig run = pipeline_run(layout, v);
    const SyntheticTokens source(run.seed, run.model.vocabulary);
    const ProcessGrid grid(MPI_COMM_WORLD, layout);
    Trainer<double> parallel(run, grid, source);
    SerialRun<double>& serial = serial_run<double>(v);
    for (int s = 0; s < 5; ++s) parallel.step();
    parallel.gather_parameters();
    const MemorizationOptions eval{static_cast<int>(run.batch_sequences), 3, 5};
    const MemorizationResult p = evaluate_memorization(parallel.model(), grid, source, eval);
    const MemorizationResult q = evaluate_memorization(serial.trainer.model(), serial.grid, source, eval);
    EXPECT_EQ(p.sequences, q.sequences) << to_string(layout);
    EXPECT_EQ(p.exact_matches, q.exact_matches) << to_string(layout);
    EXPECT_EQ(p.correct_tokens, q.correct_tokens) << to_string(layout);
    EXPECT_GT(q.loss, 1.0);
    EXPECT_LE(std::fabs(p.loss - q.loss) / q.loss, 1e-9) << to_string(layout);
  }
}

}  // namespace
}  // namespace ws
