#include "engine/comm/timeline.hpp"

#include <string>
#include <utility>

#include "engine/comm/mpi_check.hpp"

namespace ws {

TimelineTotals difference(const TimelineTotals& after, const TimelineTotals& before) {
  TimelineTotals d{};
  for (int g = 0; g < kCommGroups; ++g) {
    const GroupTotals &a = after[g], &b = before[g];
    d[g] = GroupTotals{a.blocked - b.blocked,     a.waited - b.waited,
                       a.in_flight - b.in_flight, a.progress - b.progress, a.bytes - b.bytes,
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

Time Timeline::now() const {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_);
  return Time::from_ps(static_cast<std::int64_t>(ns.count()) * 1000);
}

void Timeline::record_compute(std::string name, Time start, Time end) {
  if (tracing_) events_.push_back(TraceEvent{std::move(name), false, 0, start, end});
}

void Timeline::record_blocking(CollectiveOp op, CommGroup group, std::uint64_t bytes, Time start, Time end) {
  GroupTotals& t = totals_[index(group)];
  t.blocked += end - start;
  t.bytes += bytes;
  ++t.collectives;
  if (tracing_) events_.push_back(TraceEvent{collective_name(op, group), true, bytes, start, end});
}

void Timeline::record_barrier(CommGroup group, Time start, Time end) {
  GroupTotals& t = totals_[index(group)];
  t.blocked += end - start;
  ++t.collectives;
  if (tracing_) events_.push_back(TraceEvent{std::string("barrier.") + to_string(group), true, 0, start, end});
}

Timeline::Handle Timeline::issue(MPI_Request request, CollectiveOp op, CommGroup group,
                                 std::uint64_t bytes, Time call_start) {
  int slot = 0;
  if (free_.empty()) {
    slot = static_cast<int>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  s.request = request, s.op = op, s.group = group, s.bytes = bytes, s.issued = now(), s.used = true;
  ++in_flight_;
  GroupTotals& t = totals_[index(group)];
  t.progress += s.issued - call_start;
  t.bytes += bytes;
  ++t.collectives;
  ++t.non_blocking;
  return Handle{slot, s.generation};
}

Timeline::Handle Timeline::issue_transfer(MPI_Request request, std::string name, CommGroup group, std::uint64_t bytes,
                                          Time call_start) {
  const Handle h = issue(request, CollectiveOp::all_reduce, group, bytes, call_start);
  slots_[static_cast<std::size_t>(h.slot)].name = std::move(name);
  return h;
}

std::string Timeline::trace_name(const Slot& s) const {
  return s.name.empty() ? collective_name(s.op, s.group) : s.name;
}

bool Timeline::pending(Handle h) const {
  if (h.slot < 0) return false;
  const Slot& s = slots_[static_cast<std::size_t>(h.slot)];
  return s.used && s.generation == h.generation;
}

void Timeline::complete(int slot, Time at) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  totals_[index(s.group)].in_flight += at - s.issued;
  if (tracing_)
    events_.push_back(TraceEvent{trace_name(s), true, s.bytes, s.issued, at});
  s.used = false;
  s.name.clear();
  s.request = MPI_REQUEST_NULL;
  ++s.generation;
  free_.push_back(slot);
  --in_flight_;
}

bool Timeline::test_slot(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  int done = 0;
  const Time start = now();
  WS_MPI_CHECK(MPI_Test(&s.request, &done, MPI_STATUS_IGNORE));
  const Time end = now();
  totals_[index(s.group)].progress += end - start;
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
  const Time start = now();
  WS_MPI_CHECK(MPI_Wait(&s.request, MPI_STATUS_IGNORE));
  const Time end = now();
  GroupTotals& t = totals_[index(s.group)];
  t.blocked += end - start;
  t.waited += end - start;
  if (tracing_)
    events_.push_back(TraceEvent{"wait." + trace_name(s), false, s.bytes, start, end});
  complete(h.slot, end);
}

void Timeline::progress() {
  if (in_flight_ == 0) return;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].used) test_slot(static_cast<int>(i));
}

ComputeSpan::ComputeSpan(Timeline& timeline, const char* phase, int block, const char* what)
    : timeline_(timeline), phase_(phase), block_(block), what_(what) {
  timeline_.progress();  // here rather than in the destructor, which must not throw
  start_ = timeline_.now();
}

ComputeSpan::ComputeSpan(Timeline& timeline, const std::string& name)
    : timeline_(timeline), phase_(nullptr), block_(-1), what_(nullptr), name_(&name) {
  timeline_.progress();
  start_ = timeline_.now();
}

ComputeSpan::~ComputeSpan() {
  const Time end = timeline_.now();
  if (timeline_.tracing() && name_ != nullptr) {
    timeline_.record_compute(*name_, start_, end);
  } else if (timeline_.tracing()) {
    std::string name = phase_;
    if (block_ >= 0) name += ".block" + std::to_string(block_);
    name += ".";
    name += what_;
    timeline_.record_compute(std::move(name), start_, end);
  }
}

}  // namespace ws
