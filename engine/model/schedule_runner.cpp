#include "engine/model/schedule_runner.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace ws {

namespace {
// The payload the Communicator records for the call (engine/comm/communicator.cpp).
template <class T>
std::uint64_t payload_bytes(const StepOp& op, const CollectiveBuffers<T>& b, int group_size, int element_bytes) {
  if (b.scalars != nullptr) return b.count * sizeof(double);
  const std::uint64_t members = op.collective == CollectiveOp::all_reduce ? 1 : static_cast<std::uint64_t>(group_size);
  return b.count * members * static_cast<std::uint64_t>(element_bytes);
}
}  // namespace

template <class T>
void ScheduleRunner<T>::run(const StepSchedule& schedule, OpHandler<T>& handler) {
  const std::vector<StepOp>& ops = schedule.ops;
  const int element_bytes = ws::element_bytes(schedule.precision);
  requests_.resize(ops.size());
  Timeline& timeline = grid_.timeline();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StepOp& op = ops[i];
    switch (op.kind) {
      case StepOpKind::compute:
        if (op.traced) {
          const ComputeSpan span(timeline, op.name);
          handler.compute(op);
        } else {
          handler.compute(op);
        }
        break;
      case StepOpKind::collective:
        collective(op, i, element_bytes, handler);
        break;
      case StepOpKind::wait:
        requests_[op.partner].wait();
        handler.completed(op);
        break;
      case StepOpKind::send:
      case StepOpKind::receive:
        transfer(op, i, element_bytes, handler);
        break;
    }
  }
}

template <class T>
void ScheduleRunner<T>::collective(const StepOp& op, std::size_t index, int element_bytes, OpHandler<T>& handler) {
  const Communicator& group = grid_.group(op.group);
  const CollectiveBuffers<T> b = handler.buffers(op);
  const std::uint64_t bytes = payload_bytes(op, b, group.size(), element_bytes);
  if (bytes != op.bytes)
    throw std::logic_error(fmt::format("step op {} ({}): the engine's buffer holds {} bytes, the schedule says {}",
                                       index, op.name, bytes, op.bytes));
  if (b.scalars != nullptr) {
    group.all_reduce_sum(b.scalars, b.count);
    return;
  }
  Request request;
  switch (op.collective) {
    case CollectiveOp::all_reduce:
      if (b.max) {
        if (!op.blocking) throw std::logic_error(fmt::format("step op {} ({}): a maximum is all-reduced blocking", index, op.name));
        group.all_reduce_max(b.out, b.count);
      } else if (op.blocking)
        group.all_reduce_sum(b.out, b.count);
      else
        request = group.iall_reduce_sum(b.out, b.count);
      break;
    case CollectiveOp::all_gather:
      if (op.blocking)
        group.all_gather(b.in, b.out, b.count);
      else
        request = group.iall_gather(b.in, b.out, b.count);
      break;
    case CollectiveOp::reduce_scatter:
      if (op.blocking)
        group.reduce_scatter_sum(b.in, b.out, b.count);
      else
        request = group.ireduce_scatter_sum(b.in, b.out, b.count);
      break;
  }
  requests_[index] = std::move(request);
  if (op.blocking) handler.completed(op);
  // Open MPI advances non-blocking collectives only inside library calls: the data-parallel
  // buckets issued at a block boundary give every collective in flight a poke.
  if (op.task == StepTask::gradient_sum) grid_.timeline().progress();
}

// A stage transfer goes to the rank of the same grid position on the peer stage: member
// peer_stage of the pipeline group. The stream is the tag, so the k-th send of a stream meets the
// peer's k-th receive of it (MPI keeps one sender's messages of a tag in order).
template <class T>
void ScheduleRunner<T>::transfer(const StepOp& op, std::size_t index, int element_bytes, OpHandler<T>& handler) {
  const Communicator& pipeline = grid_.group(CommGroup::pipeline);
  const CollectiveBuffers<T> b = handler.buffers(op);
  const std::uint64_t bytes = b.count * static_cast<std::uint64_t>(element_bytes);
  if (bytes != op.bytes)
    throw std::logic_error(fmt::format("step op {} ({}): the engine's buffer holds {} bytes, the schedule says {}",
                                       index, op.name, bytes, op.bytes));
  const int tag = static_cast<int>(op.stream);
  requests_[index] = op.kind == StepOpKind::send ? pipeline.isend(b.in, b.count, op.peer_stage, tag, op.name)
                                                  : pipeline.irecv(b.out, b.count, op.peer_stage, tag, op.name);
}

template class ScheduleRunner<float>;
template class ScheduleRunner<double>;

}  // namespace ws
