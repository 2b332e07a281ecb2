// What one rank did and when: compute spans and collectives, with the time the rank was blocked
// in MPI attributed to the communicator (X, Y, Z, data, data x Z) it was blocked on. It also owns
// the MPI requests of every non-blocking collective in flight, so that progress() can poke all of
// them at fine granularity (Open MPI only advances non-blocking collectives inside MPI calls).
// Totals are always kept; individual events only while tracing (--trace).
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/units.hpp"
#include "workload/collective_op.hpp"
#include "workload/comm_group.hpp"

namespace ws {

// Per communicator, accumulated since the timeline was made.
struct GroupTotals {
  Time blocked;  // in MPI: blocking collectives plus waits on non-blocking ones
  Time waited;   // the part of `blocked` spent in waits on non-blocking collectives
  // Non-blocking collectives: sum of (observed completion - issue). An upper bound of what they
  // would have cost blocking (completion is observed at the next test or wait).
  Time in_flight;
  // Inside MPI starting non-blocking collectives and testing them between kernels: the core moves
  // and reduces their data there (Open MPI progresses them only inside library calls), so on a
  // CPU rank overlapped communication still costs compute time. Not part of `blocked`.
  Time progress;
  std::uint64_t bytes = 0;  // payload bytes per rank (the buffer each collective was given)
  long long collectives = 0;
  long long non_blocking = 0;
};
using TimelineTotals = std::array<GroupTotals, kCommGroups>;
// after - before, group by group.
TimelineTotals difference(const TimelineTotals& after, const TimelineTotals& before);

struct TraceEvent {
  std::string name;   // "fwd.block3.qkv.gemm", "allreduce.x", "wait.allreduce.data", ...
  bool comm = false;  // thread "comm" (collectives in flight) or "compute" (kernels, waits)
  std::uint64_t bytes = 0;
  Time start, end;  // since the timeline's origin
};

class Timeline {
 public:
  Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  ~Timeline();  // waits for anything still in flight

  void set_tracing(bool on) { tracing_ = on; }
  bool tracing() const { return tracing_; }
  // Restart the clock (call right after a barrier so that ranks share an origin) and drop events.
  void reset_origin();
  // Measured wall-clock time since the origin (steady clock, nanosecond resolution).
  Time now() const;

  void record_compute(std::string name, Time start, Time end);
  // A blocking collective ("allreduce.x" in the trace), or a barrier ("barrier.x").
  void record_blocking(CollectiveOp op, CommGroup group, std::uint64_t bytes, Time start, Time end);
  void record_barrier(CommGroup group, Time start, Time end);

  // Non-blocking collectives: the timeline keeps the MPI request; handles are (slot, generation).
  struct Handle {
    int slot = -1;
    std::uint64_t generation = 0;
  };
  // `call_start`: when the MPI_I* call that made `request` began (its time counts as progress).
  Handle issue(MPI_Request request, CollectiveOp op, CommGroup group, std::uint64_t bytes, Time call_start);
  // A point-to-point transfer between pipeline stages: traced as `name` ("send.activations") on
  // the comm thread, its wait as "wait." + name; counted with `group`'s collectives.
  Handle issue_transfer(MPI_Request request, std::string name, CommGroup group, std::uint64_t bytes,
                        Time call_start);
  bool pending(Handle h) const;
  bool test(Handle h);  // true once complete
  void wait(Handle h);
  // MPI_Test on every collective in flight: called between layers and kernels.
  void progress();
  int in_flight() const { return in_flight_; }

  const TimelineTotals& totals() const { return totals_; }
  const std::vector<TraceEvent>& events() const { return events_; }

 private:
  struct Slot {
    MPI_Request request = MPI_REQUEST_NULL;
    CollectiveOp op = CollectiveOp::all_reduce;
    CommGroup group = CommGroup::world;
    std::uint64_t bytes = 0;
    Time issued;
    std::uint64_t generation = 0;
    bool used = false;
    std::string name;  // a transfer's trace name (a collective's is built from op and group)
  };
  std::string trace_name(const Slot& s) const;
  void complete(int slot, Time now);
  bool test_slot(int slot);

  std::chrono::steady_clock::time_point origin_;
  bool tracing_ = false;
  TimelineTotals totals_{};
  std::vector<TraceEvent> events_;
  std::vector<Slot> slots_;
  std::vector<int> free_;
  int in_flight_ = 0;
};

// Times one compute phase (a GEMM, attention, a norm) into the timeline; the name is built only
// while tracing. Between phases it lets in-flight collectives progress.
class ComputeSpan {
 public:
  // name = phase + "." + what, or phase + ".block<b>." + what when block >= 0.
  ComputeSpan(Timeline& timeline, const char* phase, int block, const char* what);
  // A step op's span: `name` (the op's) outlives the span.
  ComputeSpan(Timeline& timeline, const std::string& name);
  ~ComputeSpan();
  ComputeSpan(const ComputeSpan&) = delete;
  ComputeSpan& operator=(const ComputeSpan&) = delete;

 private:
  Timeline& timeline_;
  const char* phase_;
  int block_;
  const char* what_;
  const std::string* name_ = nullptr;
  Time start_;
};

}  // namespace ws
