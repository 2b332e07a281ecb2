// One group of the process grid (X, Y, Z, data, data x Z, pipeline or world) and its collectives. A group of
// size 1 never calls MPI: all-reduce is a no-op and all-gather / reduce-scatter are copies, so
// serial runs and unit tests need no MPI_Init. Every collective is recorded in the grid's
// Timeline: blocking ones as time blocked on this group, non-blocking ones as in flight until
// observed complete, with the time spent waiting for them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <utility>

#include "engine/comm/timeline.hpp"

namespace ws {

// A pending non-blocking collective, held by the timeline. wait() completes it; test() lets MPI
// progress it (Open MPI only moves non-blocking collectives forward inside library calls).
class Request {
 public:
  Request() = default;
  Request(Timeline& timeline, Timeline::Handle handle) : timeline_(&timeline), handle_(handle) {}
  Request(Request&& o) noexcept
      : timeline_(std::exchange(o.timeline_, nullptr)), handle_(std::exchange(o.handle_, Timeline::Handle{})) {}
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();  // waits if still pending: a buffer must never be freed under a running collective

  void wait();
  bool test();
  bool pending() const { return timeline_ != nullptr && timeline_->pending(handle_); }

 private:
  Timeline* timeline_ = nullptr;
  Timeline::Handle handle_{};
};

class Communicator {
 public:
  Communicator() = default;  // the size-1 group
  // Takes ownership of `comm` (freed on destruction) unless `owned` is false (MPI_COMM_WORLD).
  // `timeline` outlives the communicator; `group` is what its collectives are attributed to.
  Communicator(MPI_Comm comm, bool owned, Timeline& timeline, CommGroup group);
  Communicator(Communicator&& o) noexcept;
  Communicator& operator=(Communicator&& o) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  int size() const { return size_; }
  int rank() const { return rank_; }
  CommGroup group() const { return group_; }
  MPI_Comm comm() const { return comm_; }

  // Sum over the group, in place. T is float, double, int or long long.
  template <class T>
  void all_reduce_sum(T* data, std::size_t count) const;
  template <class T>
  Request iall_reduce_sum(T* data, std::size_t count) const;
  // Maximum over the group, in place (the vocabulary-parallel loss's row maxima); recorded as an
  // all-reduce.
  template <class T>
  void all_reduce_max(T* data, std::size_t count) const;

  // out (size() * count) = concatenation of every member's `in` (count), in rank order.
  template <class T>
  void all_gather(const T* in, T* out, std::size_t count) const;
  template <class T>
  Request iall_gather(const T* in, T* out, std::size_t count) const;

  // out (count) = this member's block of the sum of every member's `in` (size() * count).
  template <class T>
  void reduce_scatter_sum(const T* in, T* out, std::size_t count) const;
  template <class T>
  Request ireduce_scatter_sum(const T* in, T* out, std::size_t count) const;

  // Non-blocking point-to-point with member `peer` (pipeline stages' activations and gradients):
  // traced as `name`, its wait as "wait." + name. Messages of one tag arrive in the order sent.
  template <class T>
  Request isend(const T* data, std::size_t count, int peer, int tag, std::string name) const;
  template <class T>
  Request irecv(T* data, std::size_t count, int peer, int tag, std::string name) const;

  void barrier() const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int size_ = 1;
  int rank_ = 0;
  Timeline* timeline_ = nullptr;
  CommGroup group_ = CommGroup::world;
};

}  // namespace ws
