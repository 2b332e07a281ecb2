#include "engine/train/trainer.hpp"

#include "engine/comm/mpi_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
  zero_ = run.layout.sharded_optimizer();
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
      bucket.group = op.group, bucket.first_tensor = op.first_tensor, bucket.last_tensor = op.last_tensor;
      const Replication replication = op.group == CommGroup::data ? Replication::z_sharded : Replication::replicated;
      for (std::size_t t = op.first_tensor; t < op.last_tensor; ++t) {
        const TensorInfo* info = store.find(tensors[t].name);
        if (info != nullptr && info->replication == replication) bucket.tensors.push_back(info);
      }
      for (const TensorInfo* t : bucket.tensors) bucket.elements += t->tensor.size;
      const Communicator& group = grid.group(op.group);
      const auto ranks = static_cast<std::size_t>(group.size());
      bucket.shard_size = zero_ ? (bucket.elements + ranks - 1) / ranks : bucket.elements;
      bucket.shard_first = zero_ ? static_cast<std::size_t>(group.rank()) * bucket.shard_size : 0;
      bucket.buffer.resize(zero_ ? bucket.shard_size * ranks : bucket.elements);
    }
    if (op.task == StepTask::gradient_pack || (op.task == StepTask::gradient_sum && op.kind == StepOpKind::collective))
      bucket_of_op_[i] = static_cast<int>(buckets_.size()) - 1;
    if (op.task == StepTask::norm_gradient_sum) {
      std::vector<const TensorInfo*>& norms = norm_tensors_of_op_[i];
      for (std::size_t t = op.first_tensor; t < op.last_tensor; ++t)
        if (tensors[t].norm)
          if (const TensorInfo* info = store.find(tensors[t].name)) norms.push_back(info);
    }
  }
  if (!zero_) return;
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    if (run.layout.pipeline > 1 && run.model.tied_embeddings && buckets_[b].first_tensor == 0 &&
        buckets_[b].last_tensor == 1)
      embedding_bucket_ = static_cast<int>(b);
  // The parameter all-gathers issued ahead of forward (and their waits): the bucket of the same range
  // and group.
  for (std::size_t i = 0; i < schedule_.ops.size(); ++i) {
    const StepOp& op = schedule_.ops[i];
    if (op.task != StepTask::adamw || op.collective != CollectiveOp::all_gather || op.blocking) continue;
    for (std::size_t b = 0; b < buckets_.size(); ++b)
      if (buckets_[b].first_tensor == op.first_tensor && buckets_[b].last_tensor == op.last_tensor &&
          buckets_[b].group == op.group)
        bucket_of_op_[i] = static_cast<int>(b);
  }
  make_shards();
}

// The distributed optimizer's view of the buckets: each rank's shard of each, the runs of tensors
// it holds (for AdamW, whose moments cover the shards only) and the weight of each of its elements
// in the squared norm; the shards start from the initial parameters.
template <class T>
void Trainer<T>::make_shards() {
  std::size_t moments = 0;
  for (GradientBucket& b : buckets_) {
    b.grad_shard.assign(b.shard_size, T(0));
    b.values.assign(b.buffer.size(), T(0));
    pack_values(b);
    std::size_t offset = 0;
    shard_norm_weights_.resize(moments + b.shard_size, T(0));
    for (const TensorInfo* t : b.tensors) {
      const std::size_t lo = std::max(offset, b.shard_first);
      const std::size_t hi = std::min(offset + t->tensor.size, b.shard_first + b.shard_size);
      if (lo < hi) {
        const std::size_t at = lo - b.shard_first;
        shard_segments_.push_back(
            AdamWSegment<T>{b.value_shard.data() + at, b.grad_shard.data() + at, moments + at, hi - lo, t->weight_decay});
        const T weight = t->in_norm ? T(1) / static_cast<T>(t->grid_replicas) : T(0);
        std::fill_n(shard_norm_weights_.begin() + static_cast<long>(moments + at), hi - lo, weight);
      }
      offset += t->tensor.size;
    }
    moments += b.shard_size;
  }
  optimizer_ = AdamW<T>(run_.optimizer, moments);
}

// The bucket's parameters packed (values) and this rank's shard of them.
template <class T>
void Trainer<T>::pack_values(GradientBucket& b) {
  const auto& store = model_.parameters();
  T* packed = b.values.data();
  for (const TensorInfo* t : b.tensors) packed = std::copy_n(store.value(t->tensor), t->tensor.size, packed);
  b.value_shard.assign(b.values.begin() + static_cast<long>(b.shard_first),
                       b.values.begin() + static_cast<long>(b.shard_first + b.shard_size));
}

template <class T>
void Trainer<T>::unpack_values(const GradientBucket& b) {
  auto& store = model_.parameters();
  const T* packed = b.values.data();
  for (const TensorInfo* t : b.tensors) {
    std::copy_n(packed, t->tensor.size, store.value(t->tensor));
    packed += t->tensor.size;
  }
}

// The all-gathers of updated parameters: one per bucket issued ahead of forward, or one per group
// of all its buckets' shards after the update (each rank's shards side by side).
template <class T>
CollectiveBuffers<T> Trainer<T>::gather_buffers(const StepOp& op) {
  if (!op.blocking) {
    GradientBucket& b = bucket_of(op);
    return {b.value_shard.data(), b.values.data(), b.shard_size};
  }
  const std::size_t g = op.group == CommGroup::data ? 0 : 1;
  std::vector<T>& send = gathered_send_[g];
  send.clear();
  for (const GradientBucket& b : buckets_)
    if (b.group == op.group) send.insert(send.end(), b.value_shard.begin(), b.value_shard.end());
  gathered_[g].resize(send.size() * static_cast<std::size_t>(grid_.group(op.group).size()));
  return {send.data(), gathered_[g].data(), send.size()};
}

template <class T>
void Trainer<T>::unpack_gathered(CommGroup group) {
  const std::size_t g = group == CommGroup::data ? 0 : 1;
  const std::size_t per_rank = gathered_send_[g].size();
  const int ranks = grid_.group(group).size();
  std::size_t offset = 0;
  for (GradientBucket& b : buckets_) {
    if (b.group != group) continue;
    for (int r = 0; r < ranks; ++r)
      std::copy_n(gathered_[g].begin() + static_cast<long>(static_cast<std::size_t>(r) * per_rank + offset),
                  b.shard_size, b.values.begin() + static_cast<long>(static_cast<std::size_t>(r) * b.shard_size));
    offset += b.shard_size;
    unpack_values(b);
  }
}

template <class T>
void Trainer<T>::completed(const StepOp& op) {
  if (op.task == StepTask::norm_gradient_sum) {
    const T* sum = norm_sums_.data();
    auto& store = model_.parameters();
    for (const TensorInfo* t : norm_tensors_of(op)) {
      std::copy_n(sum, t->tensor.size, store.grad(t->tensor));
      sum += t->tensor.size;
    }
    return;
  }
  if (!zero_ || op.task != StepTask::adamw || op.collective != CollectiveOp::all_gather) return;
  if (op.kind == StepOpKind::wait)
    unpack_values(bucket_of(op));
  else
    unpack_gathered(op.group);
}

template <class T>
void Trainer<T>::adopt_parameters() {
  if (!zero_) return;
  for (GradientBucket& b : buckets_) pack_values(b);
}

template <class T>
void Trainer<T>::gather_parameters() {
  if (!zero_) return;
  for (GradientBucket& b : buckets_) {
    grid_.group(b.group).all_gather(b.value_shard.data(), b.values.data(), b.shard_size);
    unpack_values(b);
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
const std::vector<const TensorInfo*>& Trainer<T>::norm_tensors_of(const StepOp& op) const {
  return norm_tensors_of_op_.at(static_cast<std::size_t>(&op - schedule_.ops.data()));
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
      for (const TensorInfo* t : bucket.tensors) packed = std::copy_n(store.grad(t->tensor), t->tensor.size, packed);
      break;
    }
    case StepTask::gradient_unpack:
      if (zero_) break;  // the summed gradients stay in the shards, which the optimizer updates from
      for (const GradientBucket& bucket : buckets_) {
        const T* sum = bucket.buffer.data();
        for (const TensorInfo* t : bucket.tensors) {
          std::copy_n(sum, t->tensor.size, store.grad(t->tensor));
          sum += t->tensor.size;
        }
      }
      break;
    case StepTask::gradient_norm: {
      // d(mean over supervised targets) = d(mean over all tokens) * all / supervised: exact, and
      // a no-op without the mask.
      const bool masked = sums_[1] > 0 && sums_[1] != global_tokens;
      const auto factor = static_cast<T>(global_tokens / sums_[1]);
      if (!zero_) {
        if (masked) scale_gradients(store, factor);
        square_ = gradient_square_share(store);
        break;
      }
      square_ = 0;
      std::size_t i = 0;
      for (GradientBucket& b : buckets_)
        for (T& g : b.grad_shard) {
          if (masked) g *= factor;
          square_ += static_cast<double>(g) * static_cast<double>(g) * static_cast<double>(shard_norm_weights_[i++]);
        }
      break;
    }
    case StepTask::embedding_gradient_add:
      if (embedding_bucket_ < 0) {
        model_.compute(op);
        break;
      }
      {
        std::vector<T>& g = buckets_[static_cast<std::size_t>(embedding_bucket_)].grad_shard;
        for (std::size_t i = 0; i < g.size(); ++i) g[i] += received_embedding_shard_[i];
      }
      break;
    case StepTask::adamw:
      norm_ = std::sqrt(square_);
      if (zero_)
        optimizer_.step(shard_segments_, clip_factor(norm_, run_.optimizer.clip_norm));
      else
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
  if (embedding_bucket_ >= 0 && (op.kind == StepOpKind::send || op.kind == StepOpKind::receive) &&
      op.stream == StageStream::embedding_gradients) {
    std::vector<T>& shard = buckets_[static_cast<std::size_t>(embedding_bucket_)].grad_shard;
    if (op.kind == StepOpKind::send) return {shard.data(), nullptr, shard.size()};
    received_embedding_shard_.resize(shard.size());
    return {nullptr, received_embedding_shard_.data(), shard.size()};
  }
  switch (op.task) {
    case StepTask::gradient_sum: {
      GradientBucket& bucket = bucket_of(op);
      if (zero_) return {bucket.buffer.data(), bucket.grad_shard.data(), bucket.shard_size};  // reduce-scattered
      return {nullptr, bucket.buffer.data(), bucket.buffer.size()};
    }
    case StepTask::adamw:
      return gather_buffers(op);
    case StepTask::loss_sum:
      // The loss and the supervised targets, summed over data x Z in one call.
      return {nullptr, nullptr, 2, sums_};
    case StepTask::gradient_norm_sum:
      return {nullptr, nullptr, 1, &square_};
    case StepTask::norm_gradient_sum: {
      const auto& store = model_.parameters();
      norm_sums_.clear();
      for (const TensorInfo* t : norm_tensors_of(op))
        norm_sums_.insert(norm_sums_.end(), store.grad(t->tensor), store.grad(t->tensor) + t->tensor.size);
      return {nullptr, norm_sums_.data(), norm_sums_.size()};
    }
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
