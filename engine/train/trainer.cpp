#include "engine/train/trainer.hpp"

#include "engine/comm/mpi_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <ctime>
#include <cmath>
#include <vector>

namespace ws {

namespace {

const RunConfig& checked(const RunConfig& run, const TokenSource& source) {
  if (source.vocabulary() > run.model.vocabulary)
    throw InputError(fmt::format("--vocab {} is smaller than the data's {} token values", run.model.vocabulary,
                                  source.vocabulary()));
  return run;
}
}  // namespace

template <class T>
Trainer<T>::Trainer(const RunConfig& run, const ProcessGrid& grid, const TokenSource& source)
    : run_(checked(run, source)),
      grid_(grid),
      source_(source),
      tuner_(run.tune_gemm),
      model_(run.model, grid, tuner_, run.seed),
      optimizer_(run.optimizer, model_.parameters().size()),
      shard_(batch_shard(run.layout, grid.coords(), run.batch_sequences)),
      schedule_(run.layout.pipelined()
                    ? make_stage_schedule(run.model, run.layout, run.batch_sequences, grid.coords().stage, run.schedule)
                    : make_step_schedule(run.model, run.layout, run.batch_sequences, run.schedule)),
      runner_(grid) {
  model_.set_options(run.schedule);
  // The buckets the schedule packs: the range's tensors (of rank_tensors) that this stage holds
  // and that complete over the op's group (Z-sharded weights over data, the rest over data x Z),
  // in registration order.
  const std::vector<RankTensor> tensors = rank_tensors(run.model, run.layout);
  const ParameterStore<T>& store = model_.parameters();
  bucket_of_op_.assign(schedule_.ops.size(), -1);
  for (std::size_t i = 0; i < schedule_.ops.size(); ++i) {
    const StepOp& op = schedule_.ops[i];
    if (op.task == StepTask::gradient_pack) {
      GradientBucket& bucket = buckets_.emplace_back();
      const Replication replication = op.group == CommGroup::data ? Replication::z_sharded : Replication::replicated;
      for (std::size_t t = op.first_tensor; t < op.last_tensor; ++t) {
        const TensorInfo* info = store.find(tensors[t].name);
        if (info != nullptr && info->replication == replication) bucket.tensors.push_back(info->tensor);
      }
      std::size_t elements = 0;
      for (const Tensor& t : bucket.tensors) elements += t.size;
      bucket.buffer.resize(elements);
    }
    if (op.task == StepTask::gradient_pack || (op.task == StepTask::gradient_sum && op.kind == StepOpKind::collective))
      bucket_of_op_[i] = static_cast<int>(buckets_.size()) - 1;
  }
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double exposed_seconds(const TimelineTotals& totals) {
  double sum = 0;
  for (const GroupTotals& g : totals) sum += g.blocked.seconds();
  return sum;
}

// The runner hands over the schedule's own ops, so an op's address gives its index.
template <class T>
typename Trainer<T>::GradientBucket& Trainer<T>::bucket_of(const StepOp& op) {
  const auto index = static_cast<std::size_t>(&op - schedule_.ops.data());
  assert(index < bucket_of_op_.size() && bucket_of_op_[index] >= 0);
  return buckets_[static_cast<std::size_t>(bucket_of_op_[index])];
}

template <class T>
void Trainer<T>::compute(const StepOp& op) {
  auto& store = model_.parameters();
  const int seq = run_.model.sequence_length;
  const double global_tokens = static_cast<double>(run_.batch_sequences) * seq;
  switch (op.task) {
    case StepTask::load_batch:
      batch_ = load_batch(source_, step_, shard_, seq);
      store.zero_grads();
      // The Goldfish mask depends on the tokens only, so every layout masks the same global targets.
      supervised_ = apply_goldfish_mask(run_.goldfish, batch_.inputs.data(), batch_.targets.data(), batch_.sequences,
                                        seq);
      // Pipeline stages without the loss still sum the supervised targets.
      sums_[0] = 0, sums_[1] = static_cast<double>(supervised_);
      // Backward is scaled by 1 / all tokens; the mask's share is known only after the loss sum.
      model_.set_batch(batch_.inputs.data(), batch_.targets.data(), batch_.sequences,
                       static_cast<T>(1.0 / global_tokens));
      break;
    case StepTask::gradient_pack: {
      GradientBucket& bucket = bucket_of(op);
      T* packed = bucket.buffer.data();
      for (const Tensor& t : bucket.tensors) packed = std::copy_n(store.grad(t), t.size, packed);
      break;
    }
    case StepTask::gradient_unpack:
      for (const GradientBucket& bucket : buckets_) {
        const T* sum = bucket.buffer.data();
        for (const Tensor& t : bucket.tensors) {
          std::copy_n(sum, t.size, store.grad(t));
          sum += t.size;
        }
      }
      break;
    case StepTask::gradient_norm:
      // d(mean over supervised targets) = d(mean over all tokens) * all / supervised: exact, and
      // a no-op without the mask.
      if (sums_[1] > 0 && sums_[1] != global_tokens) scale_gradients(store, static_cast<T>(global_tokens / sums_[1]));
      square_ = gradient_square_share(store);
      break;
    case StepTask::adamw:
      norm_ = std::sqrt(square_);
      optimizer_.step(store, clip_factor(norm_, run_.optimizer.clip_norm));
      break;
    case StepTask::cross_entropy_forward:
    case StepTask::cross_entropy_backward:
      model_.compute(op);
      // The model's loss over the micro-batches so far (a vocabulary-parallel loss is formed in
      // backward, once its sums over Y are in).
      sums_[0] = model_.loss_sum();
      break;
    default:
      model_.compute(op);
  }
}

template <class T>
CollectiveBuffers<T> Trainer<T>::buffers(const StepOp& op) {
  switch (op.task) {
    case StepTask::gradient_sum: {
      GradientBucket& bucket = bucket_of(op);
      return {nullptr, bucket.buffer.data(), bucket.buffer.size()};
    }
    case StepTask::loss_sum:
      // The loss and the supervised targets, summed over data x Z in one call.
      return {nullptr, nullptr, 2, sums_};
    case StepTask::gradient_norm_sum:
      return {nullptr, nullptr, 1, &square_};
    default:
      return model_.buffers(op);
  }
}

template <class T>
StepResult Trainer<T>::step() {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  Timeline& timeline = grid_.timeline();
  const TimelineTotals before = timeline.totals();
  runner_.run(schedule_, *this);
  ++step_;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = process_cpu_seconds() - cpu_start;
  // The last stage computed the loss: every stage reports it (outside the step and its timeline,
  // as Megatron-LM's logging takes it from the last stage).
  if (run_.layout.pipeline > 1) {
    const Communicator& pipeline = grid_.group(CommGroup::pipeline);
    WS_MPI_CHECK(MPI_Bcast(sums_, 2, MPI_DOUBLE, pipeline.size() - 1, pipeline.comm()));
  }
  const TimelineTotals communication = difference(timeline.totals(), before);
  // Blocked in data-parallel communication after the rank's own backward: the loss sum and the
  // waits for the gradient buckets.
  const double exposed = (communication[static_cast<std::size_t>(CommGroup::data)].blocked +
                          communication[static_cast<std::size_t>(CommGroup::data_z)].blocked).seconds();
  return StepResult{step_, sums_[1] > 0 ? sums_[0] / sums_[1] : 0.0, norm_, seconds, cpu_seconds, exposed,
                    communication};
}

template class Trainer<float>;
template class Trainer<double>;

}  // namespace ws
