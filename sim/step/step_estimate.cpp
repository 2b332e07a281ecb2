// The closed-form evaluation of one layout: the engine's own step schedule
// (workload/step_schedule.hpp, the list of ops weakscale-engine runs) executed by the step
// simulator with every collective priced alone in closed form (sim/pricing: launch, set-up per
// member, per-phase latency and bytes over the phase's bottleneck on the job's placement).
// Overlap, ordering on each communicator (an all-gather queued behind a reduce-scatter on Z),
// recomputation, the dW tiles and the skew are the schedule's and the step simulator's, so the
// closed form and the flow evaluator differ only by what collectives in flight together cost each
// other. An earlier hand-written closed form of the schedule hid each Z all-gather and the Z
// reduce-scatters behind the same compute although they share one communicator; on Alps (10B,
// 512 GH200s, 8x1x1x64) it priced exposed Z at 0.32 s where the schedule takes 0.55 s, ranking
// Z-heavy layouts first. Priced on a job network kept for the point (collective programs routed
// once per group shape), a layout's schedule costs about what that formula did.
#include "sim/step/step_estimate.hpp"

#include "workload/flops.hpp"
#include "sim/step/simulated_step.hpp"

namespace ws {

StepBreakdown breakdown_of(const SimulatedStep& simulated) {
  // The engine's data x Z all-reduces (gradients replicated over Z, the loss) are data-parallel work.
  return StepBreakdown{simulated.compute,
                       simulated.exposed(CommGroup::x),
                       simulated.exposed(CommGroup::y),
                       simulated.exposed(CommGroup::z),
                       simulated.exposed(CommGroup::data) + simulated.exposed(CommGroup::data_z),
                       simulated.skew,
                       simulated.pipeline_bubble + simulated.pipeline_transfer,
                       simulated.pipeline_transfer};
}

LayoutEstimate estimate_step(JobNetwork& network, const ModelSpec& model, const Batch& batch, const Layout& layout,
                             const StepOptions& options) {
  const DeviceSpec& dev = network.machine().device;
  LayoutEstimate est;
  est.layout = layout;
  const std::vector<StepSchedule> stages =
      machine_stage_schedules(network.machine(), model, layout, batch.sequences, options, OpNames::none);
  est.step = breakdown_of(simulate_schedules(network, stages, options, false, CollectiveModel::closed_form));
  est.memory = estimate_memory(model, batch, layout, options.bytes_per_element(), options.recompute);
  est.fits_memory = est.memory.total_bytes() <= dev.memory_capacity_bytes;
  est.hardware_flops = hardware_flops_per_step(model, batch);
  est.model_flops = model_flops_per_step(model, batch);
  const double seconds = est.step.total().seconds();
  const double peak_job = seconds * layout.devices() * peak(dev, options.precision).flops();
  if (seconds > 0) {
    est.sustained_flops_per_s = executed_flops_per_step(model, batch, options.recompute) / seconds;
    est.hardware_peak_fraction = est.hardware_flops / peak_job;
    est.model_peak_fraction = est.model_flops / peak_job;
  }
  return est;
}

LayoutEstimate estimate_step(const Machine& machine, const ModelSpec& model, const Batch& batch,
                             const Layout& layout, const StepOptions& options) {
  JobNetwork network(machine, layout.devices(), options.allocation, 1, options.ranks_per_node);
  return estimate_step(network, model, batch, layout, options);
}

}  // namespace ws
