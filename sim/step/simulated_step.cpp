// One representative rank executes the step schedule. The 4D layout is symmetric: every rank runs
// the same ops with the same sizes, and all groups of one kind run their collectives at the same
// time, so the collective model (sim/pricing) runs a call as all groups of its kind at once and
// one rank's timeline stands for the job's.
//
// Rules, in the engine's terms:
//   - the device runs one compute task at a time, in schedule order;
//   - a collective starts when the device reaches it (issue) and the previous collective on the
//     same communicator has finished (MPI orders collectives per communicator);
//   - a blocking collective holds the device until it finishes; a non-blocking one does not, and
//     its wait holds the device until it has finished;
//   - collectives in flight share the network as the collective model says (flow: every call in
//     flight shares links; closed form: each call as if alone);
//   - with a library the host progresses (machine file `progress: host`: Open MPI over shared
//     memory), the rank's core moves and reduces a non-blocking collective's data inside the MPI
//     call that starts it (every rank starts it at the same point of the same schedule), so it
//     holds the device for its whole time, counted as compute (progress), and its wait is free;
//   - with one the device progresses (GPU libraries), the compute a non-blocking call overlaps runs
//     slower by the library's compute_slowdown: charged at the call's wait on the compute done
//     between its issue and its end (each stretch of compute charged once, however many calls
//     were in flight over it), and booked as compute of the kinds it slowed.
#include "sim/step/simulated_step.hpp"

#include "base/output_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <tuple>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "sim/compute/fused_attention.hpp"
#include "sim/core/simulation.hpp"
#include "sim/compute/gemm_efficiency.hpp"
#include "base/statistics.hpp"
#include "base/check.hpp"

namespace ws {

namespace {

// GEMMs at the machine's shape-dependent efficiency; element-wise work at the slower of its memory
// traffic (roofline) and, where the machine gives the kernel's throughput, its arithmetic.
// `arithmetic_share` is the share of its alone rate the device keeps with the job's other ranks on
// the node computing too (busy_node_share).
// A machine with a fused attention rate prices the attention ops as that kernel (their Q K^T GEMM
// gives the sequence, head size and count); the engine's GEMMs and softmax traffic are not run.
Time compute_task_time(const StepOp& op, const DeviceSpec& device, Precision precision, double arithmetic_share) {
  auto shared = [arithmetic_share](Time alone) {
    return arithmetic_share == 1.0 ? alone : Time::from_seconds(alone.seconds() / arithmetic_share);
  };
  if (op.compute == ComputeKind::attention && device.fused_attention && !op.gemms.empty()) {
    const GemmCall& scores = op.gemms.front();  // Q K^T: s x s, inner dimension d
    const auto pass = op.task == StepTask::attention_backward ? AttentionPass::backward : AttentionPass::forward;
    return shared(*fused_attention_time(device, precision, static_cast<double>(scores.m),
                                        static_cast<double>(scores.k), static_cast<double>(scores.count), pass));
  }
  Time t = transfer_time(static_cast<double>(op.memory_bytes), device.memory_bandwidth);
  if (op.kernel) {
    // A kernel the file has no rate for is priced at its stand-in's (elementwise_kernel.hpp).
    double rate = device.elementwise.of(*op.kernel);
    if (rate == 0) rate = device.elementwise.of(stand_in(*op.kernel));
    if (rate > 0) t = max(t, shared(Time::from_seconds(op.elements / rate)));
  }
  Time gemms;
  for (const GemmCall& g : op.gemms)
    gemms += gemm_time(device, precision, static_cast<double>(g.m), static_cast<double>(g.n),
                       static_cast<double>(g.k)) *
             g.count;
  return t + shared(gemms);
}

// The default collective library moves only while the host calls into it (MPI): the engine's
// progress points then matter, and nothing computes beside a collective's data movement.
bool host_progressed(const Machine& machine) {
  return !machine.collective_libraries.empty() &&
         machine.collective_libraries.front().progress == CollectiveProgress::host;
}

// Linear in the node's devices the job keeps busy (`busy`): 1 alone, busy_node_compute with all of them.
double busy_node_share(const Machine& machine, int busy) {
  const int devices = machine.node.devices;
  if (devices <= 1) return 1.0;
  return 1.0 - (1.0 - machine.device.busy_node_compute) * (std::min(busy, devices) - 1) / (devices - 1);
}

double microseconds(Time t) { return t.seconds() * 1e6; }

class RankProcess;

// The point-to-point transfers between pipeline stages: the k-th send on (from, to, stream) pairs
// with the k-th receive there, and the transfer starts when both are posted (the later poster's
// time: NCCL's and MPI's rendezvous for large messages), then both ends learn its id.
class StageLinks {
 public:
  StageLinks(CollectivePricing& pricing, int stages) : pricing_(pricing), stages_(stages) {}
  // `process` posted op `index` (a send or receive of `stage`) at the kernel's time.
  void post(Time now, RankProcess& process, int stage, std::size_t index, const StepOp& op);

 private:
  struct Posted {
    RankProcess* process = nullptr;
    std::size_t index = 0;
    Bytes bytes = 0;
  };
  struct Queues {
    std::deque<Posted> sends, receives;
  };
  CollectivePricing& pricing_;
  int stages_;
  std::map<std::tuple<int, int, int>, Queues> queues_;  // (from, to, stream)
};

// A rank on the simulation kernel: it runs its schedule's compute on its own clock, and meets the
// kernel's time before each collective and wait (it jumps the kernel's clock when no one else
// acts meanwhile, else it resumes from an event); a call still in flight resumes it at its end.
// The 4D step runs one such process for the representative rank; ranks whose schedules differ
// (a pipeline's stages) are processes of their own on the same kernel and collective model.
class RankProcess final : public EventHandler {
 public:
  RankProcess(Simulation& sim, CollectivePricing& pricing, JobNetwork& network, const StepSchedule& schedule,
              const StepOptions& options, bool trace, StageLinks* links = nullptr)
      : sim_(sim),
        pricing_(pricing),
        links_(links),
        machine_(network.machine()),
        schedule_(schedule),
        precision_(options.precision),
        trace_(trace),
        arithmetic_share_(busy_node_share(machine_, network.ranks_on_a_node())),
        host_progress_(host_progressed(machine_)),
        compute_slowdown_(host_progress_ || machine_.collective_libraries.empty()
                              ? 0.0
                              : machine_.collective_libraries.front().compute_slowdown),
        call_of_op_(schedule.ops.size(), -1),
        issued_at_(schedule.ops.size()) {
    if (options.variability) {
      variability_ = machine_.variability;
      // The job's slowest device sets the pace: its ranks synchronize with every group each layer.
      slowest_device_ = variability_.device_speed_spread * network.expected_max_of_normals(schedule.layout.devices());
      for (int g = 0; g < kStepGroups; ++g)
        slowest_member_[static_cast<std::size_t>(g)] =
            network.expected_max_of_normals(group_size(schedule.layout, static_cast<CommGroup>(g)));
    }
    handler_ = sim_.add_handler(*this);
  }

  // Starts the schedule at the kernel's current time, from an event: every rank is queued there
  // before any runs, so none can jump the kernel's clock past another's start (a stage that ran
  // ahead alone would start its peers late, as unbooked time).
  void start() {
    now_ = sim_.now();
    sim_.schedule(now_, handler_, kResume);
  }
  bool finished() const { return next_op_ == schedule_.ops.size() && !waiting_; }

  // After the kernel ran out of events: the rank's step.
  SimulatedStep result() && {
    WS_CHECK(finished(), "the rank ran its whole schedule");
    // Comm events were recorded at issue; their ends are known now.
    for (const auto& [event, call] : pending_comm_events_) events_[event].end = pricing_.finish(call);
    SimulatedStep step;
    step.step = now_;
    step.stage = schedule_.stage;
    step.pipeline_bubble = bubble_;
    step.pipeline_transfer = stage_transfer_;
    step.compute = compute_;
    step.skew = skew_;
    step.exposed_comm = exposed_;
    step.compute_by_kind = compute_by_kind_;
    if (host_progress_) step.progress_comm = progress_;
    step.events = std::move(events_);
    return step;
  }

  // The call this rank waits for has ended (what = kResume: the clock reached the rank's time).
  // Send or receive `index` was matched: its transfer is `id`, started at the kernel's time.
  void matched(std::size_t index, int id) {
    call_of_op_[index] = id;
    issued_at_[index] = sim_.now();
    if (awaiting_match_ == index) {
      awaiting_match_ = kNoOp;
      call_awaited_ = id;
      pricing_.notify_end(id, handler_, kCallEnded);
    }
  }

  void on_event(Simulation&, std::uint32_t what, std::uint64_t) override {
    if (what == kCallEnded) {
      waiting_ = false;
      finish_op(*pricing_.end(call_awaited_));
      ++next_op_;
    }
    resume();
  }

 private:
  enum : std::uint32_t { kResume = 0, kCallEnded = 1 };

  void resume() {
    const auto& ops = schedule_.ops;
    while (next_op_ < ops.size()) {
      const StepOp& op = ops[next_op_];
      if (op.kind == StepOpKind::compute) {
        run_compute(op);
        ++next_op_;
        continue;
      }
      // Collectives and waits act on the network at the rank's time.
      if (now_ > sim_.now() && !sim_.jump_to(now_)) {
        sim_.schedule(now_, handler_, kResume);
        return;
      }
      if (op.kind == StepOpKind::send || op.kind == StepOpKind::receive) {
        WS_CHECK(links_ != nullptr, "a pipelined schedule runs with its stages' links");
        links_->post(sim_.now(), *this, schedule_.stage, next_op_, op);
        ++next_op_;
        continue;
      }
      if (op.kind == StepOpKind::collective) {
        run_collective(op, next_op_);
      } else if (call_of_op_[op.partner] < 0) {
        // A wait for a transfer whose other end has not posted yet: the match resumes it.
        WS_CHECK(is_transfer(ops[op.partner]), "an operation's partner call was issued before it");
        awaiting_match_ = op.partner;
        waiting_ = true;
        return;
      }
      if (needs_end(op)) {
        const int call = op.kind == StepOpKind::collective ? call_of_op_[next_op_] : call_of_op_[op.partner];
        if (const std::optional<Time> end = pricing_.end(call)) {
          finish_op(*end);
        } else {
          call_awaited_ = call;
          waiting_ = true;
          pricing_.notify_end(call, handler_, kCallEnded);
          return;  // on_event finishes the op
        }
      }
      ++next_op_;
    }
  }

  // Whether the op holds the rank until a call's end: a wait, a blocking call, or any call the
  // host progresses.
  bool needs_end(const StepOp& op) const {
    return op.kind == StepOpKind::wait || op.blocking || host_progress_;
  }
  static bool is_transfer(const StepOp& op) { return op.kind == StepOpKind::send || op.kind == StepOpKind::receive; }

  // The op at next_op_ learned its call's end.
  void finish_op(Time end) {
    const StepOp& op = schedule_.ops[next_op_];
    if (op.kind == StepOpKind::wait && is_transfer(schedule_.ops[op.partner])) {
      run_transfer_wait(op, end);
    } else if (op.kind == StepOpKind::wait) {
      run_wait(op, end);
    } else if (op.blocking) {
      block_until(end, static_cast<std::size_t>(op.group));
    } else {
      // The core runs it now; the engine's trace shows no compute span there, only a gap.
      const Time busy = end - now_;
      progress_[static_cast<std::size_t>(op.group)] += busy;
      compute_ += busy;
      now_ = end;
    }
  }

 private:
  void record(const StepOp& op, bool comm, Bytes bytes, Time start, Time end) {
    if (trace_)
      events_.push_back(SimulatedEvent{op.name, comm, bytes, start, end});
  }

  void run_compute(const StepOp& op) {
    const Time t = compute_task_time(op, machine_.device, precision_, arithmetic_share_);
    // Work the engine does between its spans leaves the same gap in both traces.
    if (op.traced) record(op, false, 0, now_, now_ + t);
    if (compute_slowdown_ > 0.0 && t > Time::zero()) computed_.push_back({now_, now_ + t, op.compute});
    now_ += t;
    compute_ += t;
    compute_by_kind_[static_cast<std::size_t>(op.compute)] += t;
    lag_behind_slowest_device(t);
    const double noise = variability_.compute_noise * t.seconds();
    for (double& v : noise_variance_) v += noise * noise;
  }

  // The job runs at its slowest device's pace: `compute` takes slowest_device_ more, as skew.
  void lag_behind_slowest_device(Time compute) {
    if (slowest_device_ <= 0.0) return;
    const Time lag = scale(compute, slowest_device_);
    now_ += lag;
    skew_ += lag;
  }

  // How long a group waits for its slowest member at a synchronization: the spread its members'
  // compute noise built up since the group last synchronized, and their arrival jitter, times the
  // expected maximum of `members` normal deviates. Grows with the group (about sqrt(2 ln n)).
  Time synchronization_wait(CommGroup group) {
    const auto g = static_cast<std::size_t>(group);
    const double jitter = variability_.collective_entry_jitter.seconds();
    const double spread = std::sqrt(noise_variance_[g] + jitter * jitter);
    noise_variance_[g] = 0.0;
    if (slowest_member_[g] <= 0.0 || spread <= 0.0) return Time::zero();
    return Time::from_seconds(spread * slowest_member_[g]);
  }

  void run_collective(const StepOp& op, std::size_t index) {
    // The call starts when the group's slowest member arrives. A blocking call (or one the core
    // runs) holds this rank until then; a non-blocking one starts late while it computes on.
    const Time wait = synchronization_wait(op.group);
    if (op.blocking || host_progress_) {
      now_ += wait;
      skew_ += wait;
    }
    const Time issue = op.blocking || host_progress_ ? now_ : now_ + wait;
    const int call = pricing_.issue(issue, CollectiveCall{op.group, op.collective, op.bytes, schedule_.stage});
    call_of_op_[index] = call;
    issued_at_[index] = issue;
    // As the engine records it: from the moment the rank reached the call to completion.
    if (trace_) {
      pending_comm_events_.emplace_back(events_.size(), call);
      record(op, true, op.bytes, now_, now_);
    }
  }

  // Waiting for a transfer: until both ends had posted it, the stage idles for its peer (the
  // pipeline's bubble); from then, for the transfer itself.
  void run_transfer_wait(const StepOp& op, Time done) {
    if (done <= now_) return;
    record(op, false, op.bytes, now_, done);
    const Time started = min(max(issued_at_[op.partner], now_), done);
    bubble_ += started - now_;
    stage_transfer_ += done - started;
    now_ = done;
  }

  void run_wait(const StepOp& op, Time done) {
    if (compute_slowdown_ > 0.0) slow_overlapped_compute(issued_at_[op.partner], done);
    // The engine records a wait only when the collective was still in flight.
    if (done > now_) record(op, false, op.bytes, now_, done);
    block_until(done, static_cast<std::size_t>(op.group));
  }

  // The device computed slower while a call was in flight from `issued` to `done`: the compute in
  // that span not charged yet (a stretch under several calls is charged once) takes
  // compute_slowdown more, which delays the device now, before it waits.
  void slow_overlapped_compute(Time issued, Time done) {
    const Time from = max(issued, charged_until_), to = min(done, now_);
    if (to <= from) return;
    for (std::size_t i = first_uncharged_; i < computed_.size() && computed_[i].start < to; ++i) {
      const Time overlap = min(computed_[i].end, to) - max(computed_[i].start, from);
      if (overlap <= Time::zero()) continue;
      const Time extra = scale(overlap, compute_slowdown_);
      now_ += extra;
      compute_ += extra;
      compute_by_kind_[static_cast<std::size_t>(computed_[i].kind)] += extra;
      lag_behind_slowest_device(extra);  // the slowest device's pace, on the slowed compute too
    }
    charged_until_ = to;
    while (first_uncharged_ < computed_.size() && computed_[first_uncharged_].end <= to) ++first_uncharged_;
  }

  void block_until(Time t, std::size_t group) {
    if (t <= now_) return;
    exposed_[group] += t - now_;
    now_ = t;
  }

  Simulation& sim_;
  CollectivePricing& pricing_;
  StageLinks* links_;
  std::size_t awaiting_match_ = kNoOp;  // the send or receive a wait needs matched first
  Time bubble_, stage_transfer_;
  const Machine& machine_;
  const StepSchedule& schedule_;
  Precision precision_;
  bool trace_;
  int handler_ = -1;
  std::size_t next_op_ = 0;  // the schedule's next op to run (or the one waiting for its call)
  bool waiting_ = false;     // for call_awaited_'s end
  int call_awaited_ = -1;
  double arithmetic_share_;
  bool host_progress_;
  double compute_slowdown_;  // the default library's, where the device progresses its collectives
  std::vector<int> call_of_op_;  // per op index: the collective model's call id
  std::vector<Time> issued_at_;  // per op index: when its collective started
  struct ComputeSpan {
    Time start, end;
    ComputeKind kind;
  };
  std::vector<ComputeSpan> computed_;  // the device's compute so far (with a compute_slowdown only)
  std::size_t first_uncharged_ = 0;    // computed_ before it ends by charged_until_
  Time charged_until_;                 // compute before this time has paid its slowdown
  std::vector<std::pair<std::size_t, int>> pending_comm_events_;  // (event index, call)
  std::array<Time, kStepGroups> exposed_{};
  std::array<Time, kStepGroups> progress_{};
  Time now_, compute_, skew_;
  Variability variability_;      // zero when the options turn variability off
  double slowest_device_ = 0.0;  // the slowest device's extra time per unit of compute
  std::array<double, kStepGroups> slowest_member_{};  // expected maximum of each group's members, in sd
  std::array<double, kStepGroups> noise_variance_{};  // per group since its last synchronization, s^2
  std::array<Time, kComputeKinds> compute_by_kind_{};
  std::vector<SimulatedEvent> events_;
};

void StageLinks::post(Time now, RankProcess& process, int stage, std::size_t index, const StepOp& op) {
  WS_CHECK(op.peer_stage >= 0 && op.peer_stage < stages_ && op.peer_stage != stage, "a transfer's peer is another stage");
  const bool send = op.kind == StepOpKind::send;
  const int from = send ? stage : op.peer_stage, to = send ? op.peer_stage : stage;
  Queues& q = queues_[{from, to, static_cast<int>(op.stream)}];
  std::deque<Posted>& mine = send ? q.sends : q.receives;
  std::deque<Posted>& theirs = send ? q.receives : q.sends;
  if (theirs.empty()) {
    mine.push_back({&process, index, op.bytes});
    return;
  }
  const Posted other = theirs.front();
  theirs.pop_front();
  WS_CHECK(other.bytes == op.bytes, "a stage's send and its peer's receive move the same bytes");
  const int id = pricing_.transfer(now, StageTransfer{from, to, op.bytes});
  other.process->matched(other.index, id);
  process.matched(index, id);
}

constexpr int kComputeThread = 0;  // as engine/train/trace_writer.cpp
constexpr int kCommThread = 1;

nlohmann::json metadata(const char* what, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

std::vector<SimulatedStep> simulate_stages(JobNetwork& network, std::span<const StepSchedule> stages,
                                           const StepOptions& options, bool trace, CollectiveModel collectives) {
  WS_CHECK(!stages.empty(), "a step has a schedule per stage");
  const Layout& layout = stages.front().layout;
  WS_CHECK(network.devices() == layout.devices() && static_cast<int>(stages.size()) == layout.pipeline,
           "the network holds the layout's devices and there is a schedule per stage");
  Simulation sim;
  const std::unique_ptr<CollectivePricing> pricing = make_pricing(collectives, network, layout, sim);
  StageLinks links(*pricing, layout.pipeline);
  std::vector<std::unique_ptr<RankProcess>> ranks;
  for (const StepSchedule& schedule : stages)
    ranks.push_back(std::make_unique<RankProcess>(sim, *pricing, network, schedule, options, trace, &links));
  for (auto& rank : ranks) rank->start();
  sim.run();
  std::vector<SimulatedStep> steps;
  for (auto& rank : ranks) {
    if (!rank->finished())
      throw std::logic_error(fmt::format("pipeline layout {}: stage {} waits for a transfer no stage sends "
                                         "(the schedule deadlocks)",
                                         to_string(layout), steps.size()));
    steps.push_back(std::move(*rank).result());
  }
  return steps;
}

SimulatedStep simulate_schedules(JobNetwork& network, std::span<const StepSchedule> stages,
                                 const StepOptions& options, bool trace, CollectiveModel collectives) {
  WS_CHECK(!stages.empty(), "a step has a schedule per stage");
  if (stages.size() == 1 && !stages.front().layout.pipelined())
    return simulate_schedule(network, stages.front(), options, trace, collectives);
  std::vector<SimulatedStep> steps = simulate_stages(network, stages, options, trace, collectives);
  // The step ends with its last stage to finish; its parts are that stage's.
  std::size_t last = 0;
  for (std::size_t s = 1; s < steps.size(); ++s)
    if (steps[s].step > steps[last].step) last = s;
  return std::move(steps[last]);
}

SimulatedStep simulate_schedule(JobNetwork& network, const StepSchedule& schedule, const StepOptions& options,
                                bool trace, CollectiveModel collectives) {
  WS_CHECK(network.devices() == schedule.layout.devices(), "the network holds the layout's devices");
  Simulation sim;
  const std::unique_ptr<CollectivePricing> pricing = make_pricing(collectives, network, schedule.layout, sim);
  RankProcess rank(sim, *pricing, network, schedule, options, trace);
  rank.start();
  sim.run();
  return std::move(rank).result();
}

StepSchedule machine_step_schedule(const Machine& machine, const ModelSpec& model, const Layout& layout,
                                   long long sequences, const StepOptions& options, OpNames names) {
  StepScheduleOptions o = options;
  if (!host_progressed(machine)) o.weight_gradient_tiles = 1;
  return make_step_schedule(model, layout, sequences, o, names);
}

std::vector<StepSchedule> machine_stage_schedules(const Machine& machine, const ModelSpec& model, const Layout& layout,
                                                  long long sequences, const StepOptions& options, OpNames names) {
  if (!layout.pipelined()) return {machine_step_schedule(machine, model, layout, sequences, options, names)};
  StepScheduleOptions o = options;
  if (!host_progressed(machine)) o.weight_gradient_tiles = 1;
  std::vector<StepSchedule> stages;
  for (int s = 0; s < layout.pipeline; ++s) stages.push_back(make_stage_schedule(model, layout, sequences, s, o, names));
  return stages;
}

SimulatedStep simulate_step(const Machine& machine, const SimulatedStepConfig& config) {
  const std::vector<StepSchedule> stages =
      machine_stage_schedules(machine, config.model, config.layout, config.sequences, config.options,
                              config.trace ? OpNames::trace : OpNames::none);
  JobNetwork network(machine, config.layout.devices(), config.options.allocation, 1, config.options.ranks_per_node);
  return simulate_schedules(network, stages, config.options, config.trace, config.collectives);
}

void write_simulated_trace(const SimulatedStep& step, const std::string& path) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata("process_name", 0, "rank 0"));
  events.push_back(metadata("thread_name", kComputeThread, "compute"));
  events.push_back(metadata("thread_name", kCommThread, "comm"));
  for (const SimulatedEvent& e : step.events) {
    nlohmann::json event{{"name", e.name},
                         {"cat", e.comm ? "comm" : "compute"},
                         {"ph", "X"},
                         {"ts", microseconds(e.start)},
                         {"dur", microseconds(e.end) - microseconds(e.start)},
                         {"pid", 0},
                         {"tid", e.comm ? kCommThread : kComputeThread}};
    if (e.comm || e.bytes > 0) {
      const auto dot = e.name.rfind('.');
      event["args"] = {{"bytes", e.bytes}, {"group", dot == std::string::npos ? "" : e.name.substr(dot + 1)}};
    }
    events.push_back(std::move(event));
  }
  const nlohmann::json trace{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  write_file_atomically(path, trace.dump() + "\n");
}

}  // namespace ws
