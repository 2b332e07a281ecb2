// What a training step asks of the network: issue a collective on one of the layout's
// communicators, and learn when it finishes. One interface, two models:
//  - closed form: each call is priced alone (every communicator of its kind at once, on the
//    job's topology), fast enough to rank every layout;
//  - flow: every call in flight is a set of shaped flows on one FlowNetwork, all communicators of
//    all kinds at once, sharing NICs, intra-node, local and global links; a call's progress changes
//    when another starts or ends.
// Both run the same programs (JobNetwork), pick the same algorithms and keep MPI's order per
// communicator (a call starts when the previous call on its communicator has finished).
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <utility>
#include <vector>
#include <optional>
#include <string_view>

#include "workload/layout.hpp"
#include "workload/step_schedule.hpp"
#include "workload/collective_op.hpp"
#include "sim/core/simulation.hpp"
#include "sim/pricing/job_network.hpp"

namespace ws {

// How a step's collectives are timed: each call alone in closed form; every call in flight as
// phase flows on one network; or the per-send reference, every send its own flow (small jobs).
enum class CollectiveModel { closed_form, flow, every_step };
const char* to_string(CollectiveModel model);                    // "closed-form", "flow", "every-step"
std::optional<CollectiveModel> parse_collective_model(std::string_view text);

struct CollectiveCall {
  CommGroup group = CommGroup::x;
  CollectiveOp op = CollectiveOp::all_reduce;
  Bytes bytes = 0;  // per member: all-gather output, reduce-scatter input, all-reduce buffer
  int stage = 0;    // the pipeline stage whose communicators run it
};

// Every rank of pipeline stage `from` sends `bytes` to its counterpart on stage `to`.
struct StageTransfer {
  int from = 0, to = 0;
  Bytes bytes = 0;
};

// A collective model on the simulation kernel: calls are issued by a process at the kernel's time
// (or later), and their ends are events of the kernel.
class CollectivePricing {
 public:
  virtual ~CollectivePricing() = default;
  // Issues `call` at `now` (never before the kernel's time); returns its id.
  virtual int issue(Time now, const CollectiveCall& call) = 0;
  // Starts `transfer` at `now` (both ends have posted it); returns its id, which end, notify_end
  // and finish take as a call's. Transfers queue behind nothing.
  virtual int transfer(Time now, const StageTransfer& transfer) = 0;
  // When call `id` finished, once it has in the kernel's time (the closed form knows at issue).
  virtual std::optional<Time> end(int id) const = 0;
  // Schedules an event for `handler` (what, data = id) at the call's end, or now if it has ended.
  virtual void notify_end(int id, int handler, std::uint32_t what) = 0;
  // The algorithm the library runs for the call.
  virtual CollectiveAlgorithm algorithm(int id) const = 0;
  // When call `id` finishes: runs the kernel as far as it takes to know.
  Time finish(int id);

 protected:
  explicit CollectivePricing(Simulation& sim) : sim_(sim) {}
  Simulation& sim_;
};

// What the models that run calls in simulated time share (flow, every step): MPI's order per
// communicator (a call starts when the previous call on its communicator has ended) and telling
// whoever waits for a call's end.
class OrderedPricing : public CollectivePricing {
 public:
  int issue(Time now, const CollectiveCall& call) final;
  int transfer(Time now, const StageTransfer& transfer) final;
  std::optional<Time> end(int id) const final;
  void notify_end(int id, int handler, std::uint32_t what) final;

 protected:
  explicit OrderedPricing(Simulation& sim);
  const CollectiveCall& call(int id) const { return calls_[static_cast<std::size_t>(id)].call; }
  // The stage transfer `id` is, or none for a collective call.
  const std::optional<StageTransfer>& stage_transfer(int id) const { return calls_[static_cast<std::size_t>(id)].transfer; }
  // Call `id` was issued: the model sets up what it keeps for it (called before start).
  virtual void prepare(int id) = 0;
  // Its communicator is free: the call starts at t (no earlier than its issue).
  virtual void start(int id, Time t) = 0;
  // The model ended call `id` at t (the kernel's time): its waiters are told, and the next call
  // on its communicator starts.
  void finish_call(int id, Time t);

 private:
  struct Call {
    CollectiveCall call;
    std::optional<StageTransfer> transfer;
    Time issued, end;
    bool done = false;
    std::vector<std::pair<int, std::uint32_t>> waiters;  // (handler, what) told of the end
  };
  std::vector<Call> calls_;
  // Per communicator (stage x kStepGroups + group): the call running on it, and those queued.
  std::size_t communicator(const CollectiveCall& call);
  std::vector<int> running_;
  std::vector<std::deque<int>> waiting_;
};

// The algorithm the machine's default library runs for `op` of `bytes` on a communicator of `g`:
// the library family's rules (select_algorithm, sim/collectives); for an NCCL-like all-reduce
// where the machine file's tree thresholds do not cover the node count, whichever of ring and tree
// the closed form prices faster, as NCCL's tuner picks by its own cost model.
CollectiveAlgorithm choose_algorithm(JobNetwork& network, const CollectiveLibrary& library, GroupGeometry g,
                                     CollectiveOp op, Bytes bytes);

// The closed form of one call of `program` alone: launch + set-up per member + per phase,
// phase_latency + phase_wire_bytes x seconds per byte.
Time program_time(const PricedProgram& program, const CollectiveLibrary& library, Bytes bytes,
                  Bytes nic_overhead_bytes);
// Which of the library's protocols runs this call: the index in CollectiveLibrary::protocols of
// the one the closed form prices fastest, or kOwnProtocol where the library's own terms are (ties
// go to the earlier). program_time prices with it.
int fastest_protocol(const PricedProgram& program, const CollectiveLibrary& library, Bytes bytes,
                     Bytes nic_overhead_bytes);
// Once per call: the library's launch latency and its set-up per member of the communicator.
Time call_latency(const PricedProgram& program, const CollectiveLibrary& library);
// A phase's latency: steps x (library step latency + path latency + the library's eager-overflow
// and large-job overheads for a step of this size on this many nodes).
// How much longer each of the phase's channels carries data when the library runs fewer channels
// than the phase has (ProtocolTerms::bytes_per_channel): phase.channels / channels in use, >= 1.
double channel_concentration(const PricedPhase& phase, const CollectiveLibrary& library, Bytes bytes);
Time phase_latency(const PricedProgram& program, const PricedPhase& phase, const CollectiveLibrary& library,
                   Bytes bytes);
// The latency a phase pays beyond its transfer of `transfer` alone: all of `latency` when the
// library's steps are serial, sqrt(latency^2 + transfer^2) - transfer when they are pipelined
// (StepOverlap). The flow model charges this before the phase's flows, which contention stretches.
Time unhidden_latency(const CollectiveLibrary& library, Time latency, Time transfer);
// Bytes a phase's largest transfer puts on the wire: its share of `bytes` / bandwidth efficiency,
// plus the NIC's small-message bytes per step across nodes.
double phase_wire_bytes(const PricedPhase& phase, const CollectiveLibrary& library, Bytes bytes,
                        Bytes nic_overhead_bytes);
// A phase alone: its unhidden latency plus its wire bytes at the phase's bottleneck rate.
Time phase_time(const PricedProgram& program, const PricedPhase& phase, const CollectiveLibrary& library,
                Bytes bytes, Bytes nic_overhead_bytes);

// The time of `call` alone on the layout's communicators (closed form).
Time collective_time(JobNetwork& network, const Layout& layout, const CollectiveCall& call);
// The time of `transfer` alone between the layout's stages (closed form).
Time stage_transfer_time(JobNetwork& network, const Layout& layout, const StageTransfer& transfer);

// The model's calls run on `sim` (which must outlive it).
std::unique_ptr<CollectivePricing> make_pricing(CollectiveModel model, JobNetwork& network, const Layout& layout,
                                                Simulation& sim);

}  // namespace ws
