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
        break;
      case StepOpKind::send:
      case StepOpKind::receive:
        // validate_run refuses pipelined layouts: their schedules are only priced.
        throw std::logic_error(fmt::format("step op {} ({}): the engine runs no pipeline stages", i, op.name));
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
      if (op.blocking)
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
  // Open MPI advances non-blocking collectives only inside library calls: the data-parallel
  // buckets issued at a block boundary give every collective in flight a poke.
  if (op.task == StepTask::gradient_sum) grid_.timeline().progress();
}

template class ScheduleRunner<float>;
template class ScheduleRunner<double>;

}  // namespace ws
