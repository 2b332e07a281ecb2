#include "sim/step/step_estimate.hpp"

#include <gtest/gtest.h>

#include "workload/flops.hpp"
#include "tests/sim/step/fake_machine.hpp"
#include "sim/step/simulated_step.hpp"

namespace ws {
namespace {

using ws::testing::fake_machine;
using ws::testing::scale_bandwidths;

ModelSpec small_model() { return ModelSpec{"small", 4, 1024, 16, 512, 4096, 1}; }

TEST(StepEstimate, OneDeviceIsPureCompute) {
  const LayoutEstimate e =
      estimate_step(fake_machine(1), small_model(), Batch{8}, Layout{1, 1, 1, 1}, StepOptions{});
  EXPECT_EQ(e.step.exposed_x, Time::zero());
  EXPECT_EQ(e.step.exposed_y, Time::zero());
  EXPECT_EQ(e.step.exposed_z, Time::zero());
  EXPECT_EQ(e.step.exposed_data, Time::zero());
  EXPECT_EQ(e.step.total(), e.step.compute);
  EXPECT_GT(e.step.compute, Time::zero());
}

// The closed form is the engine's schedule with every collective alone: the step simulator on
// CollectiveModel::closed_form gives the same parts to the picosecond, for every overlap switch
// (whose effects, including an all-gather queued behind a reduce-scatter on Z, are the schedule's:
// tests/sim/step), and the flow network, where collectives in flight share links, is never faster.
TEST(StepEstimate, IsTheScheduleWithEachCollectiveAlone) {
  const Machine m = fake_machine();
  for (const Layout& layout :
       {Layout{2, 2, 2, 2}, Layout{1, 2, 4, 4}, Layout{4, 1, 2, 4}, Layout{1, 4, 2, 4}, Layout{8, 1, 1, 2}}) {
    for (int bits = 0; bits < 32; ++bits) {
      SimulatedStepConfig c;
      c.model = small_model();
      c.layout = layout;
      c.sequences = 32;
      c.options.overlap_all_reduce = bits & 1;
      c.options.overlap_reduce_scatter = bits & 2;
      c.options.overlap_all_gather = bits & 4;
      c.options.overlap_data_parallel = bits & 8;
      c.options.recompute = bits & 16;
      const StepBreakdown closed = estimate_step(m, small_model(), Batch{32}, layout, c.options).step;
      c.collectives = CollectiveModel::closed_form;
      const SimulatedStep alone = simulate_step(m, c);
      EXPECT_EQ(closed.total(), alone.step) << to_string(layout) << " switches " << bits;
      EXPECT_EQ(closed.compute, alone.compute);
      EXPECT_EQ(closed.exposed_z, alone.exposed(CommGroup::z));
      EXPECT_EQ(closed.exposed_data, alone.exposed(CommGroup::data) + alone.exposed(CommGroup::data_z));
      EXPECT_EQ(closed.skew, alone.skew);
      c.collectives = CollectiveModel::flow;
      EXPECT_GE(simulate_step(m, c).step, alone.step) << to_string(layout) << " switches " << bits;
    }
  }
}

TEST(StepEstimate, MoreBandwidthNeverSlower) {
  const Machine base = fake_machine();
  const Machine faster = scale_bandwidths(base, 2.0);
  for (const Layout& layout :
       {Layout{2, 2, 2, 2}, Layout{1, 2, 4, 4}, Layout{32, 1, 1, 1}, Layout{1, 4, 8, 1}}) {
    const auto a = estimate_step(base, small_model(), Batch{32}, layout, StepOptions{});
    const auto b = estimate_step(faster, small_model(), Batch{32}, layout, StepOptions{});
    EXPECT_LE(b.step.total(), a.step.total()) << to_string(layout);
    EXPECT_EQ(b.step.compute, a.step.compute);
  }
}

TEST(StepEstimate, CommunicationAppearsOnManyDevices) {
  const auto e = estimate_step(fake_machine(), small_model(), Batch{32}, Layout{2, 2, 2, 2}, StepOptions{});
  EXPECT_GT(e.step.exposed_x, Time::zero());
  EXPECT_GT(e.step.exposed_data, Time::zero());
  EXPECT_GT(e.step.total(), e.step.compute);
}

TEST(StepEstimate, FlopsAndPeakFractionsAreConsistent) {
  const Machine m = fake_machine();
  const Batch batch{32};
  for (bool recompute : {true, false}) {
    StepOptions o;
    o.recompute = recompute;
    const Layout layout{2, 2, 2, 4};
    const auto e = estimate_step(m, small_model(), batch, layout, o);
    const double seconds = e.step.total().seconds();
    const double peak_job = seconds * layout.devices() * m.device.peak_bf16.flops();
    EXPECT_DOUBLE_EQ(e.hardware_flops, hardware_flops_per_step(small_model(), batch));
    EXPECT_DOUBLE_EQ(e.model_flops, model_flops_per_step(small_model(), batch));
    EXPECT_DOUBLE_EQ(e.hardware_peak_fraction, e.hardware_flops / peak_job);
    EXPECT_DOUBLE_EQ(e.model_peak_fraction, e.model_flops / peak_job);
    EXPECT_DOUBLE_EQ(e.sustained_flops_per_s,
                     executed_flops_per_step(small_model(), batch, recompute) / seconds);
    EXPECT_GT(e.hardware_peak_fraction, 0.0);
    EXPECT_LT(e.hardware_peak_fraction, 1.0);
  }
}

TEST(StepEstimate, RecomputeCostsComputeAndSavesMemory) {
  StepOptions with, without;
  without.recompute = false;
  const auto a = estimate_step(fake_machine(), small_model(), Batch{32}, Layout{2, 2, 2, 2}, with);
  const auto b = estimate_step(fake_machine(), small_model(), Batch{32}, Layout{2, 2, 2, 2}, without);
  EXPECT_GT(a.step.compute, b.step.compute);
  EXPECT_LT(a.memory.activations_bytes, b.memory.activations_bytes);
  EXPECT_EQ(a.fits_memory, a.memory.total_bytes() <= fake_machine().device.memory_capacity_bytes);
}

}  // namespace
}  // namespace ws
