// One training step of the engine, simulated: the shared step schedule (workload/
// step_schedule.hpp) turned into a task graph per rank on top of the machine's compute and network
// model. Compute tasks run one at a time on the device (GEMMs from the machine's shape-dependent
// efficiency, everything else from a memory-bandwidth roofline); collectives go to a collective
// model (sim/pricing: the flow network with every call in flight, or the closed form of each call
// alone); non-blocking ones overlap compute exactly where the engine overlaps them.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "workload/step_schedule.hpp"
#include "sim/machine/machine.hpp"
#include "sim/pricing/collective_pricing.hpp"
#include "sim/step/step_options.hpp"

namespace ws {

// What is simulated: the same knobs as a weakscale-engine run.
struct SimulatedStepConfig {
  ModelSpec model;  // full spec (the engine's --layers/--hidden/--heads/--seq/--vocab)
  Layout layout;
  long long sequences = 0;  // global batch in sequences (the engine's --batch)
  StepOptions options;      // precision fp32 for the engine; recompute; OAR / ORS / OAG
  bool trace = false;       // keep per-task events (Perfetto JSON via write_simulated_trace)
  CollectiveModel collectives = CollectiveModel::flow;
};

struct SimulatedEvent {
  std::string name;  // the engine's trace event name: "fwd.block3.qkv.gemm", "allreduce.x", ...
  bool comm = false;
  Bytes bytes = 0;
  Time start, end;
};

struct SimulatedStep {
  Time step;
  Time compute;  // sum of the device's compute tasks (and, with host progress, collectives)
  // Time lost to variability (machine file `variability`): the slowest device's extra compute, and
  // waits at synchronizations for a group's slowest member (compute noise, entry jitter).
  Time skew;
  // With a library whose collectives the host progresses (CollectiveProgress::host): the device
  // time spent running non-blocking collectives inside MPI calls, per group (part of compute, not
  // of exposed_comm, as the engine's progress_s). Zero otherwise. Indexed by CommGroup.
  std::array<Time, kStepGroups> progress_comm{};
  // Exposed (blocking or waited-for) communication per group, indexed by CommGroup (x .. data_z),
  // as the engine's summary JSON "comm" object.
  std::array<Time, kStepGroups> exposed_comm{};
  // Compute time per phase, indexed by ComputeKind, for per-phase bars.
  std::array<Time, kComputeKinds> compute_by_kind{};
  std::vector<SimulatedEvent> events;  // rank 0's timeline, only with config.trace
  // A pipelined step: the stage whose ranks finished last (the parts above are its), its time
  // idle at transfers whose other end had not posted yet (the bubble) and waiting for transfers
  // in flight between stages.
  int stage = 0;
  Time pipeline_bubble;
  Time pipeline_transfer;

  Time exposed(CommGroup group) const { return exposed_comm[static_cast<std::size_t>(group)]; }
  Time progress(CommGroup group) const { return progress_comm[static_cast<std::size_t>(group)]; }
  Time compute_of(ComputeKind kind) const { return compute_by_kind[static_cast<std::size_t>(kind)]; }
};

SimulatedStep simulate_step(const Machine& machine, const SimulatedStepConfig& config);

// The engine's step schedule as it runs on `machine`: where the default collective library
// progresses on its own (GPU libraries), dW is one GEMM; the engine's row tiles are how it moves
// host-progressed collectives (StepScheduleOptions::weight_gradient_tiles). A schedule that is
// only priced, not traced, needs no op names (OpNames::none).
StepSchedule machine_step_schedule(const Machine& machine, const ModelSpec& model, const Layout& layout,
                                   long long sequences, const StepOptions& options,
                                   OpNames names = OpNames::trace);

// Every stage's schedule of a layout (make_stage_schedule), or the one schedule of a layout
// without stages.
std::vector<StepSchedule> machine_stage_schedules(const Machine& machine, const ModelSpec& model, const Layout& layout,
                                                  long long sequences, const StepOptions& options,
                                                  OpNames names = OpNames::trace);

// Executes an already built schedule (simulate_step builds it from the config) on `network` (a job
// of the layout's size on the machine; the caller may keep it for several layouts of one size).
SimulatedStep simulate_schedule(JobNetwork& network, const StepSchedule& schedule, const StepOptions& options,
                                bool trace, CollectiveModel collectives = CollectiveModel::flow);
// Every stage of a pipelined layout as a process of its own on one kernel and one collective model
// (a stage's collectives on its own communicators, transfers between stages as flows between their
// nodes), all started at the kernel's time: each stage's step, in stage order.
std::vector<SimulatedStep> simulate_stages(JobNetwork& network, std::span<const StepSchedule> stages,
                                           const StepOptions& options, bool trace,
                                           CollectiveModel collectives = CollectiveModel::flow);
// The step of simulate_stages: the last stage's end, with that stage's parts. One schedule of a
// layout without stages: simulate_schedule.
SimulatedStep simulate_schedules(JobNetwork& network, std::span<const StepSchedule> stages,
                                 const StepOptions& options, bool trace,
                                 CollectiveModel collectives = CollectiveModel::flow);

// Chrome trace / Perfetto JSON with the engine's process/thread naming, so both load together.
void write_simulated_trace(const SimulatedStep& step, const std::string& path);

}  // namespace ws
