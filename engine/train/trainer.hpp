// One rank's training loop. A step runs the step schedule's ops in order (workload/
// step_schedule.hpp): load this rank's shard of the global batch, forward, backward, complete the
// gradients over data (Z-sharded weights) or data x Z (the rest) in buckets started block by
// block during backward; clip by the global norm; AdamW. The trainer runs its own tasks (batch,
// buckets, loss sum, norm, optimizer) and hands the rest to the model. It owns the run's GEMM
// tuner, model and optimizer; the process grid and token source outlive it.
#pragma once

#include <array>
#include <map>
#include <vector>

#include "engine/comm/process_grid.hpp"
#include "engine/kernels/gemm_tuner.hpp"
#include "engine/model/gpt.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/run_config.hpp"
#include "engine/train/token_source.hpp"

namespace ws {

struct StepResult {
  long long step = 0;       // 1-based
  double loss = 0;          // mean cross-entropy over the global batch
  double grad_norm = 0;     // before clipping
  double seconds = 0;       // wall time of the whole step on this rank
  // CPU time of this process during the step (all its threads; includes MPI's busy polling).
  // Well below `seconds` means the rank was descheduled: a machine shared with other work.
  double cpu_seconds = 0;
  // Time this rank spent blocked in data-parallel communication after its own computation was
  // done: the part of the all-reduce that overlap did not hide.
  double exposed_communication_seconds = 0;
  // This step's collectives per communicator: time blocked in MPI (exposed), time non-blocking
  // ones were in flight, bytes. Computation = seconds - the sum of blocked time over groups.
  TimelineTotals communication{};
};
// Seconds blocked in MPI over all groups.
double exposed_seconds(const TimelineTotals& totals);
// CPU time of this process so far (CLOCK_PROCESS_CPUTIME_ID).
double process_cpu_seconds();

template <class T>
class Trainer final : public OpHandler<T> {
 public:
  // Throws InputError if the source's tokens do not fit the model's vocabulary.
  Trainer(const RunConfig& run, const ProcessGrid& grid, const TokenSource& source);
  StepResult step();

  Gpt<T>& model() { return model_; }
  const Gpt<T>& model() const { return model_; }
  const GemmTuner<T>& tuner() const { return tuner_; }
  AdamW<T>& optimizer() { return optimizer_; }
  const AdamW<T>& optimizer() const { return optimizer_; }
  GemmTuner<T>& tuner() { return tuner_; }
  const RunConfig& run() const { return run_; }
  const ProcessGrid& grid() const { return grid_; }
  // Steps done so far; the next step reads the batch of this index (data position).
  long long steps_done() const { return step_; }
  void set_steps_done(long long steps) { step_ = steps; }
  const StepSchedule& schedule() const { return schedule_; }

  void compute(const StepOp& op) override;
  CollectiveBuffers<T> buffers(const StepOp& op) override;

 private:
  RunConfig run_;
  const ProcessGrid& grid_;
  const TokenSource& source_;
  GemmTuner<T> tuner_;
  Gpt<T> model_;
  AdamW<T> optimizer_;
  BatchShard shard_;
  StepSchedule schedule_;
  ScheduleRunner<T> runner_;
  // Gradients of several tensors packed for one data-parallel all-reduce, one per gradient_pack op
  // of the schedule. The buffers are kept across steps: packing into a fresh vector each step
  // (page faults, regrowth) took 8-11 ms of a 150 ms 2-rank step on this project's VM for 6 MiB,
  // against ~1 ms for the copy itself.
  struct GradientBucket {
    std::vector<const TensorInfo*> tensors;  // where the packed gradients come from and go back to, in order
    std::vector<T> buffer;
    // The distributed optimizer (Layout::zero_stage, Megatron-LM's): the bucket padded to a multiple
    // of its group's ranks, this rank's shard of it [shard_first, shard_first + shard_size): its
    // summed gradients and parameters, and the whole bucket's parameters as gathered.
    CommGroup group = CommGroup::data;
    std::size_t first_tensor = 0, last_tensor = 0;
    std::size_t elements = 0, shard_first = 0, shard_size = 0;
    std::vector<T> grad_shard, value_shard, values;
  };
  std::vector<GradientBucket> buckets_;
  std::vector<int> bucket_of_op_;  // the bucket of a gradient or parameter op, else -1
  GradientBucket& bucket_of(const StepOp& op);
  // Sequence parallelism: the norms' gradients of a norm_gradient_sum op's range, packed for their
  // all-reduce over Y and put back when it returns.
  std::map<std::size_t, std::vector<const TensorInfo*>> norm_tensors_of_op_;
  std::vector<T> norm_sums_;
  const std::vector<const TensorInfo*>& norm_tensors_of(const StepOp& op) const;
  // The distributed optimizer's parts (zero_ only).
  bool zero_ = false;
  std::vector<AdamWSegment<T>> shard_segments_;  // the shards' runs of each tensor, for AdamW
  std::vector<T> shard_norm_weights_;            // per shard element: 1 / its copies in the grid (0: padding)
  std::array<std::vector<T>, 2> gathered_send_, gathered_;  // per group (data, data x Z): all its buckets' shards
  // With stages and a tied embedding, the embedding's own bucket on the first and last stage
  // (workload/step_schedule.cpp, shared_embedding_bucket): the stages exchange and sum its shard.
  int embedding_bucket_ = -1;
  std::vector<T> received_embedding_shard_;
  void make_shards();
  void pack_values(GradientBucket& bucket);
  void unpack_values(const GradientBucket& bucket);
  CollectiveBuffers<T> gather_buffers(const StepOp& op);
  void unpack_gathered(CommGroup group);

 public:
  // With the distributed optimizer overlapping its parameter all-gather with the next step's
  // forward, the last update is on its shard only until then: this gathers it (outside a step),
  // so that every rank's parameters are the model's. Nothing to do otherwise.
  void gather_parameters();
  // After the parameters were set from outside (a checkpoint): the distributed optimizer's shards
  // and gathered buckets take them. Nothing to do otherwise.
  void adopt_parameters();
  void completed(const StepOp& op) override;

 private:
  // The step in progress: its batch, the loss and supervised-target sums, the squared norm.
  TokenBatch batch_;
  double sums_[2] = {0, 0};
  long long supervised_ = 0;
  double square_ = 0, norm_ = 0;
  long long step_ = 0;
};

}  // namespace ws
