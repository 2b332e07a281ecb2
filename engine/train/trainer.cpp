#include "engine/train/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <deque>
#include <vector>

namespace ws {

namespace {

// Gradients of several tensors packed for one data-parallel all-reduce.
template <class T>
struct GradientBucket {
  std::vector<Tensor> tensors;  // where the packed gradients come from and go back to, in order
  std::vector<T>* buffer = nullptr;  // one of Trainer::bucket_buffers_
  Request request;  // destroyed with the bucket: a pending request waits
};

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
      shard_(batch_shard(run.layout, grid.coords(), run.batch_sequences)) {
  model_.set_overlap(run.overlap);
  model_.set_recompute(run.recompute);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double exposed_seconds(const TimelineTotals& totals) {
  double sum = 0;
  for (const GroupTotals& g : totals) sum += g.blocked_s;
  return sum;
}

template <class T>
StepResult Trainer<T>::step() {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  Timeline& timeline = grid_.timeline();
  const TimelineTotals before = timeline.totals();
  const int seq = run_.model.sequence_length;
  TokenBatch batch;
  auto& store = model_.parameters();
  {
    const ComputeSpan span(timeline, "input", -1, "load_batch");
    batch = load_batch(source_, step_, shard_, seq);
    store.zero_grads();
  }
  // The Goldfish mask depends on the tokens only, so every layout masks the same global targets.
  const long long supervised = apply_goldfish_mask(run_.goldfish, batch.inputs.data(), batch.targets.data(),
                                                   batch.sequences, seq);
  const double loss_sum = model_.forward(batch.inputs.data(), batch.targets.data(), batch.sequences);
  const double global_tokens = static_cast<double>(run_.batch_sequences) * seq;
  // Z-sharded weights were already reduce-scattered over Z in backward and now sum over data;
  // everything replicated over Z sums over data x Z.
  const Communicator& data = grid_.group(CommGroup::data);
  const Communicator& batch_group = grid_.batch_group();
  // Gradients are all-reduced in buckets: the tensors of one call that complete over the same
  // group are packed into one buffer, so a block costs two collectives instead of one per tensor (a
  // bias or a norm alone would pay a whole collective's latency for a few KiB; at thousands of
  // ranks that latency dominates the step). The copies are memory-bound and small next to the
  // backward pass.
  std::deque<GradientBucket<T>> buckets;
  auto reduce = [&](Tensor range) {
    for (const Replication replication : {Replication::z_sharded, Replication::replicated}) {
      const Communicator& group = replication == Replication::z_sharded ? data : batch_group;
      if (group.size() == 1) continue;
      GradientBucket<T>& bucket = buckets.emplace_back();
      for (const TensorInfo& info : store.tensors()) {
        if (info.tensor.offset < range.offset || info.tensor.offset >= range.offset + range.size) continue;
        if (info.replication == replication) bucket.tensors.push_back(info.tensor);
      }
      if (bucket.tensors.empty()) {
        buckets.pop_back();
        continue;
      }
      if (bucket_buffers_.size() < buckets.size()) bucket_buffers_.emplace_back();
      bucket.buffer = &bucket_buffers_[buckets.size() - 1];
      std::size_t elements = 0;
      for (const Tensor& t : bucket.tensors) elements += t.size;
      bucket.buffer->resize(elements);  // the same size every step: no allocation after the first
      T* packed = bucket.buffer->data();
      for (const Tensor& t : bucket.tensors) packed = std::copy_n(store.grad(t), t.size, packed);
      bucket.request = group.iall_reduce_sum(bucket.buffer->data(), bucket.buffer->size());
    }
    // Open MPI advances non-blocking collectives only inside library calls: poke the ones in
    // flight at every block boundary.
    for (GradientBucket<T>& b : buckets) b.request.test();
  };
  const auto scale = static_cast<T>(1.0 / global_tokens);
  if (run_.overlap_data_parallel)
    model_.backward(scale, reduce);
  else {
    model_.backward(scale);
    reduce(Tensor{0, store.size()});
  }
  const auto exposed_start = std::chrono::steady_clock::now();
  // The loss and the number of supervised targets in one call: backward scaled by 1 / all tokens,
  // and the Goldfish mask's share is known only now (each rank saw its shard).
  double sums[2] = {loss_sum, static_cast<double>(supervised)};
  batch_group.all_reduce_sum(sums, 2);
  for (GradientBucket<T>& b : buckets) b.request.wait();
  const double exposed = std::chrono::duration<double>(std::chrono::steady_clock::now() - exposed_start).count();
  for (const GradientBucket<T>& b : buckets) {
    const T* sum = b.buffer->data();
    for (const Tensor& t : b.tensors) {
      std::copy_n(sum, t.size, store.grad(t));
      sum += t.size;
    }
  }

  double square = 0;
  {
    const ComputeSpan span(timeline, "optimizer", -1, "grad_norm");
    // d(mean over supervised targets) = d(mean over all tokens) * all / supervised: exact, and
    // a no-op without the mask.
    if (sums[1] > 0 && sums[1] != global_tokens) scale_gradients(store, static_cast<T>(global_tokens / sums[1]));
    square = gradient_square_share(store);
  }
  grid_.group(CommGroup::x).all_reduce_sum(&square, 1);
  grid_.group(CommGroup::y).all_reduce_sum(&square, 1);
  grid_.group(CommGroup::z).all_reduce_sum(&square, 1);
  const double norm = std::sqrt(square);
  {
    const ComputeSpan span(timeline, "optimizer", -1, "adamw");
    optimizer_.step(store, clip_factor(norm, run_.optimizer.clip_norm));
  }
  ++step_;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = process_cpu_seconds() - cpu_start;
  return StepResult{step_, sums[1] > 0 ? sums[0] / sums[1] : 0.0, norm, seconds, cpu_seconds, exposed,
                    difference(timeline.totals(), before)};
}

template class Trainer<float>;
template class Trainer<double>;

}  // namespace ws
