#include "engine/comm/timeline.hpp"

#include <string>
#include <utility>

#include "engine/comm/mpi_check.hpp"

namespace ws {

TimelineTotals difference(const TimelineTotals& after, const TimelineTotals& before) {
  TimelineTotals d{};
  for (int g = 0; g < kCommGroups; ++g) {
    const GroupTotals &a = after[g], &b = before[g];
    d[g] = GroupTotals{a.blocked_s - b.blocked_s,     a.waited_s - b.waited_s,
                       a.in_flight_s - b.in_flight_s, a.progress_s - b.progress_s, a.bytes - b.bytes,
                       a.collectives - b.collectives, a.non_blocking - b.non_blocking};
  }
  return d;
}

namespace {
std::string collective_name(CollectiveOp op, CommGroup group) {
  return std::string(trace_name(op)) + "." + to_string(group);
}
std::size_t index(CommGroup g) { return static_cast<std::size_t>(g); }
}  // namespace

Timeline::Timeline() : origin_(std::chrono::steady_clock::now()) {}

Timeline::~Timeline() {
  for (Slot& s : slots_)
    if (s.used && s.request != MPI_REQUEST_NULL) MPI_Wait(&s.request, MPI_STATUS_IGNORE);  // no throw
}

void Timeline::reset_origin() {
  origin_ = std::chrono::steady_clock::now();
  events_.clear();
}

double Timeline::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}

void Timeline::record_compute(std::string name, double start_us, double end_us) {
  if (tracing_) events_.push_back(TraceEvent{std::move(name), false, 0, start_us, end_us});
}

void Timeline::record_blocking(CollectiveOp op, CommGroup group, std::uint64_t bytes, double start_us,
                               double end_us) {
  GroupTotals& t = totals_[index(group)];
  t.blocked_s += (end_us - start_us) * 1e-6;
  t.bytes += bytes;
  ++t.collectives;
  if (tracing_) events_.push_back(TraceEvent{collective_name(op, group), true, bytes, start_us, end_us});
}

void Timeline::record_barrier(CommGroup group, double start_us, double end_us) {
  GroupTotals& t = totals_[index(group)];
  t.blocked_s += (end_us - start_us) * 1e-6;
  ++t.collectives;
  if (tracing_) events_.push_back(TraceEvent{std::string("barrier.") + to_string(group), true, 0, start_us, end_us});
}

Timeline::Handle Timeline::issue(MPI_Request request, CollectiveOp op, CommGroup group,
                                 std::uint64_t bytes, double call_start_us) {
  int slot = 0;
  if (free_.empty()) {
    slot = static_cast<int>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  s.request = request, s.op = op, s.group = group, s.bytes = bytes, s.issue_us = now_us(), s.used = true;
  ++in_flight_;
  GroupTotals& t = totals_[index(group)];
  t.progress_s += (s.issue_us - call_start_us) * 1e-6;
  t.bytes += bytes;
  ++t.collectives;
  ++t.non_blocking;
  return Handle{slot, s.generation};
}

bool Timeline::pending(Handle h) const {
  if (h.slot < 0) return false;
  const Slot& s = slots_[static_cast<std::size_t>(h.slot)];
  return s.used && s.generation == h.generation;
}

void Timeline::complete(int slot, double now) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  totals_[index(s.group)].in_flight_s += (now - s.issue_us) * 1e-6;
  if (tracing_)
    events_.push_back(TraceEvent{collective_name(s.op, s.group), true, s.bytes, s.issue_us, now});
  s.used = false;
  s.request = MPI_REQUEST_NULL;
  ++s.generation;
  free_.push_back(slot);
  --in_flight_;
}

bool Timeline::test_slot(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  int done = 0;
  const double start = now_us();
  WS_MPI_CHECK(MPI_Test(&s.request, &done, MPI_STATUS_IGNORE));
  const double end = now_us();
  totals_[index(s.group)].progress_s += (end - start) * 1e-6;
  if (done) complete(slot, end);
  return done != 0;
}

bool Timeline::test(Handle h) {
  if (!pending(h)) return true;
  return test_slot(h.slot);
}

void Timeline::wait(Handle h) {
  if (!pending(h)) return;
  Slot& s = slots_[static_cast<std::size_t>(h.slot)];
  const double start = now_us();
  WS_MPI_CHECK(MPI_Wait(&s.request, MPI_STATUS_IGNORE));
  const double end = now_us();
  GroupTotals& t = totals_[index(s.group)];
  t.blocked_s += (end - start) * 1e-6;
  t.waited_s += (end - start) * 1e-6;
  if (tracing_)
    events_.push_back(TraceEvent{"wait." + collective_name(s.op, s.group), false, s.bytes, start, end});
  complete(h.slot, end);
}

void Timeline::progress() {
  if (in_flight_ == 0) return;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].used) test_slot(static_cast<int>(i));
}

ComputeSpan::ComputeSpan(Timeline& timeline, const char* phase, int block, const char* what)
    : timeline_(timeline), phase_(phase), block_(block), what_(what), start_us_(0) {
  timeline_.progress();  // here rather than in the destructor, which must not throw
  start_us_ = timeline_.now_us();
}

ComputeSpan::ComputeSpan(Timeline& timeline, const std::string& name)
    : timeline_(timeline), phase_(nullptr), block_(-1), what_(nullptr), name_(&name), start_us_(0) {
  timeline_.progress();
  start_us_ = timeline_.now_us();
}

ComputeSpan::~ComputeSpan() {
  const double end = timeline_.now_us();
  if (timeline_.tracing() && name_ != nullptr) {
    timeline_.record_compute(*name_, start_us_, end);
  } else if (timeline_.tracing()) {
    std::string name = phase_;
    if (block_ >= 0) name += ".block" + std::to_string(block_);
    name += ".";
    name += what_;
    timeline_.record_compute(std::move(name), start_us_, end);
  }
}

}  // namespace ws
