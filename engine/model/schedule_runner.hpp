// Runs the ops of a step schedule (workload/step_schedule.hpp) on this rank, in their
// order: the schedule is the engine's step, not a copy of it. A compute op runs the code its
// handler owns for the op's task, inside a timeline span when the op is traced; a collective runs
// on the process grid's communicator for the op's group, with the buffers the handler names,
// blocking or issued as the op says; a send or receive goes to the peer stage's rank, non-blocking;
// a wait completes the request its collective or transfer left.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/comm/process_grid.hpp"
#include "workload/step_schedule.hpp"

namespace ws {

// Where a collective's data lives. `count` is what the Communicator call takes: the buffer's
// elements for an all-reduce (in place on `out`), each member's block for an all-gather (from
// `in` into `out`) and a reduce-scatter (from `in`, size() blocks, into `out`); a send's `in` and
// a receive's `out`, of `count` elements.
template <class T>
struct CollectiveBuffers {
  const T* in = nullptr;
  T* out = nullptr;
  std::size_t count = 0;
  // The loss and gradient-norm sums are doubles whatever T is: all-reduced in place instead.
  double* scalars = nullptr;
  // An all-reduce of the maximum, not the sum (the vocabulary-parallel loss's row maxima).
  bool max = false;
};

// What runs an op's task: the model's layers, or the trainer for its own tasks.
template <class T>
class OpHandler {
 public:
  virtual void compute(const StepOp& op) = 0;
  virtual CollectiveBuffers<T> buffers(const StepOp& op) = 0;
  // After a blocking collective has returned, or a wait completed its request: what arrived may be
  // put where it belongs (the distributed optimizer's gathered parameters).
  virtual void completed(const StepOp& /*op*/) {}

 protected:
  ~OpHandler() = default;
};

template <class T>
class ScheduleRunner {
 public:
  explicit ScheduleRunner(const ProcessGrid& grid) : grid_(grid) {}

  // Every non-blocking collective of the schedule has its wait in it: nothing is in flight after.
  // Throws std::logic_error when a handler's buffer disagrees with an op's payload (in elements:
  // a Gpt<double> runs an fp32 schedule).
  void run(const StepSchedule& schedule, OpHandler<T>& handler);

 private:
  void collective(const StepOp& op, std::size_t index, int element_bytes, OpHandler<T>& handler);
  void transfer(const StepOp& op, std::size_t index, int element_bytes, OpHandler<T>& handler);

  const ProcessGrid& grid_;
  std::vector<Request> requests_;  // by op index: the non-blocking collectives in flight
};

}  // namespace ws
