// One group of the process grid (X, Y, Z, data or world) and its collectives. A group of size 1
// never calls MPI: all-reduce is a no-op and all-gather / reduce-scatter are copies, so serial
// runs and unit tests need no MPI_Init.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <utility>

namespace ws {

// A pending non-blocking collective. wait() completes it; test() lets MPI progress it (Open MPI
// only moves non-blocking collectives forward inside library calls).
class Request {
 public:
  Request() = default;
  explicit Request(MPI_Request r) : request_(r) {}
  Request(Request&& o) noexcept : request_(std::exchange(o.request_, MPI_REQUEST_NULL)) {}
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();  // waits if still pending: a buffer must never be freed under a running collective

  void wait();
  bool test();
  bool pending() const { return request_ != MPI_REQUEST_NULL; }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

class Communicator {
 public:
  Communicator() = default;  // the size-1 group
  // Takes ownership of `comm` (freed on destruction) unless `owned` is false (MPI_COMM_WORLD).
  Communicator(MPI_Comm comm, bool owned);
  Communicator(Communicator&& o) noexcept;
  Communicator& operator=(Communicator&& o) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  int size() const { return size_; }
  int rank() const { return rank_; }

  // Sum over the group, in place. T is float, double, int or long long.
  template <class T>
  void all_reduce_sum(T* data, std::size_t count) const;
  template <class T>
  Request iall_reduce_sum(T* data, std::size_t count) const;

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

  void barrier() const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int size_ = 1;
  int rank_ = 0;
};

}  // namespace ws
