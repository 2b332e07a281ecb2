#include "engine/comm/communicator.hpp"

#include <algorithm>
#include <cassert>
#include <climits>

#include "engine/comm/mpi_check.hpp"

namespace ws {

namespace {

template <class T>
MPI_Datatype datatype();
template <>
MPI_Datatype datatype<float>() { return MPI_FLOAT; }
template <>
MPI_Datatype datatype<double>() { return MPI_DOUBLE; }
template <>
MPI_Datatype datatype<int>() { return MPI_INT; }
template <>
MPI_Datatype datatype<long long>() { return MPI_LONG_LONG; }

int mpi_count(std::size_t count) {
  // MPI-3 counts are int; larger messages would need chunking or MPI-4 large counts.
  assert(count <= static_cast<std::size_t>(INT_MAX));
  return static_cast<int>(count);
}

}  // namespace

Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (pending()) timeline_->wait(handle_);
    timeline_ = std::exchange(o.timeline_, nullptr);
    handle_ = std::exchange(o.handle_, Timeline::Handle{});
  }
  return *this;
}

Request::~Request() {
  if (!pending()) return;
  try {
    timeline_->wait(handle_);
  } catch (...) {  // destructor: no throw; the failure has been reported by the call that failed
  }
}

void Request::wait() {
  if (pending()) timeline_->wait(handle_);
}

bool Request::test() { return !pending() || timeline_->test(handle_); }

Communicator::Communicator(MPI_Comm comm, bool owned, Timeline& timeline, CommGroup group)
    : comm_(comm), owned_(owned), timeline_(&timeline), group_(group) {
  // Errors come back as codes for WS_MPI_CHECK instead of aborting the job.
  WS_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  WS_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  WS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
}

Communicator::Communicator(Communicator&& o) noexcept
    : comm_(std::exchange(o.comm_, MPI_COMM_NULL)), owned_(std::exchange(o.owned_, false)),
      size_(std::exchange(o.size_, 1)), rank_(std::exchange(o.rank_, 0)),
      timeline_(std::exchange(o.timeline_, nullptr)), group_(o.group_) {}

Communicator& Communicator::operator=(Communicator&& o) noexcept {
  if (this != &o) {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(o.owned_, false);
    size_ = std::exchange(o.size_, 1);
    rank_ = std::exchange(o.rank_, 0);
    timeline_ = std::exchange(o.timeline_, nullptr);
    group_ = o.group_;
  }
  return *this;
}

Communicator::~Communicator() {
  if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

template <class T>
void Communicator::all_reduce_sum(T* data, std::size_t count) const {
  if (size_ == 1) return;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), datatype<T>(), MPI_SUM, comm_));
  timeline_->record_blocking(CollectiveOp::all_reduce, group_, count * sizeof(T), start, timeline_->now());
}

template <class T>
void Communicator::all_reduce_max(T* data, std::size_t count) const {
  if (size_ == 1) return;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), datatype<T>(), MPI_MAX, comm_));
  timeline_->record_blocking(CollectiveOp::all_reduce, group_, count * sizeof(T), start, timeline_->now());
}

template <class T>
Request Communicator::iall_reduce_sum(T* data, std::size_t count) const {
  if (size_ == 1) return Request{};
  MPI_Request r = MPI_REQUEST_NULL;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, mpi_count(count), datatype<T>(), MPI_SUM, comm_, &r));
  return Request{*timeline_, timeline_->issue(r, CollectiveOp::all_reduce, group_, count * sizeof(T), start)};
}

template <class T>
void Communicator::all_gather(const T* in, T* out, std::size_t count) const {
  if (size_ == 1) return void(std::copy(in, in + count, out));
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Allgather(in, mpi_count(count), datatype<T>(), out, mpi_count(count), datatype<T>(), comm_));
  timeline_->record_blocking(CollectiveOp::all_gather, group_, count * size_ * sizeof(T), start,
                             timeline_->now());
}

template <class T>
Request Communicator::iall_gather(const T* in, T* out, std::size_t count) const {
  if (size_ == 1) {
    std::copy(in, in + count, out);
    return Request{};
  }
  MPI_Request r = MPI_REQUEST_NULL;
  const Time start = timeline_->now();
  WS_MPI_CHECK(
      MPI_Iallgather(in, mpi_count(count), datatype<T>(), out, mpi_count(count), datatype<T>(), comm_, &r));
  return Request{*timeline_, timeline_->issue(r, CollectiveOp::all_gather, group_, count * size_ * sizeof(T), start)};
}

template <class T>
void Communicator::reduce_scatter_sum(const T* in, T* out, std::size_t count) const {
  if (size_ == 1) return void(std::copy(in, in + count, out));
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Reduce_scatter_block(in, out, mpi_count(count), datatype<T>(), MPI_SUM, comm_));
  timeline_->record_blocking(CollectiveOp::reduce_scatter, group_, count * size_ * sizeof(T), start,
                             timeline_->now());
}

template <class T>
Request Communicator::ireduce_scatter_sum(const T* in, T* out, std::size_t count) const {
  if (size_ == 1) {
    std::copy(in, in + count, out);
    return Request{};
  }
  MPI_Request r = MPI_REQUEST_NULL;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Ireduce_scatter_block(in, out, mpi_count(count), datatype<T>(), MPI_SUM, comm_, &r));
  return Request{*timeline_,
                 timeline_->issue(r, CollectiveOp::reduce_scatter, group_, count * size_ * sizeof(T), start)};
}

template <class T>
Request Communicator::isend(const T* data, std::size_t count, int peer, int tag, std::string name) const {
  MPI_Request r = MPI_REQUEST_NULL;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Isend(data, mpi_count(count), datatype<T>(), peer, tag, comm_, &r));
  return Request{*timeline_, timeline_->issue_transfer(r, std::move(name), group_, count * sizeof(T), start)};
}

template <class T>
Request Communicator::irecv(T* data, std::size_t count, int peer, int tag, std::string name) const {
  MPI_Request r = MPI_REQUEST_NULL;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Irecv(data, mpi_count(count), datatype<T>(), peer, tag, comm_, &r));
  return Request{*timeline_, timeline_->issue_transfer(r, std::move(name), group_, count * sizeof(T), start)};
}

void Communicator::barrier() const {
  if (size_ == 1) return;
  const Time start = timeline_->now();
  WS_MPI_CHECK(MPI_Barrier(comm_));
  timeline_->record_barrier(group_, start, timeline_->now());
}

#define WS_INSTANTIATE(T)                                                                             \
  template void Communicator::all_reduce_sum<T>(T*, std::size_t) const;                                \
  template Request Communicator::iall_reduce_sum<T>(T*, std::size_t) const;                            \
  template void Communicator::all_reduce_max<T>(T*, std::size_t) const;                                \
  template void Communicator::all_gather<T>(const T*, T*, std::size_t) const;                          \
  template Request Communicator::iall_gather<T>(const T*, T*, std::size_t) const;                      \
  template void Communicator::reduce_scatter_sum<T>(const T*, T*, std::size_t) const;                  \
  template Request Communicator::ireduce_scatter_sum<T>(const T*, T*, std::size_t) const;                \
  template Request Communicator::isend<T>(const T*, std::size_t, int, int, std::string) const;         \
  template Request Communicator::irecv<T>(T*, std::size_t, int, int, std::string) const;
WS_INSTANTIATE(float)
WS_INSTANTIATE(double)
WS_INSTANTIATE(int)
WS_INSTANTIATE(long long)
#undef WS_INSTANTIATE

}  // namespace ws
