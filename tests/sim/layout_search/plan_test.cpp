#include "sim/layout_search/plan.hpp"

#include <gtest/gtest.h>

#include "tests/sim/step/fake_machine.hpp"
#include "base/input_error.hpp"

namespace ws {
namespace {

using ws::testing::fake_machine;

ModelSpec plan_test_model() { return ModelSpec{"small", 4, 1024, 16, 512, 4096, 1}; }

TEST(Plan, RankedAscendingAndFitting) {
  const Machine m = fake_machine();
  const Plan plan = plan_layouts(m, plan_test_model(), Batch{32}, 32, StepOptions{});
  ASSERT_FALSE(plan.ranked.empty());
  for (std::size_t i = 1; i < plan.ranked.size(); ++i) {
    EXPECT_LE(plan.ranked[i - 1].step.total(), plan.ranked[i].step.total());
  }
  for (const auto& e : plan.ranked) {
    EXPECT_TRUE(e.fits_memory);
    EXPECT_LE(e.memory.total_bytes(), m.device.memory_capacity_bytes);
  }
  for (const auto& e : plan.over_memory) EXPECT_FALSE(e.fits_memory);
  for (const auto& c : plan.invalid) EXPECT_FALSE(c.reason.empty());
  EXPECT_EQ(plan.ranked.size() + plan.over_memory.size() + plan.invalid.size(),
            enumerate_layouts(plan_test_model(), Batch{32}, 32).size());
}

TEST(Plan, SmallMemorySendsLayoutsOverMemory) {
  Machine m = fake_machine();
  m.device.memory_capacity_bytes = 2e8;
  const Plan plan = plan_layouts(m, plan_test_model(), Batch{32}, 32, StepOptions{});
  EXPECT_FALSE(plan.over_memory.empty());
  for (std::size_t i = 1; i < plan.over_memory.size(); ++i) {
    EXPECT_LE(plan.over_memory[i - 1].step.total(), plan.over_memory[i].step.total());
  }
  for (const auto& e : plan.ranked) EXPECT_LE(e.memory.total_bytes(), m.device.memory_capacity_bytes);
}

TEST(Plan, RejectsDeviceCountsOutsideTheMachine) {
  const Machine m = fake_machine();
  EXPECT_THROW(plan_layouts(m, plan_test_model(), Batch{32}, 0, StepOptions{}), InputError);
  EXPECT_THROW(plan_layouts(m, plan_test_model(), Batch{32}, m.total_devices() + 1, StepOptions{}), InputError);
}

// A step past Time's range saturates; the plan names the machine and says why rather than rank
// it (before: the sum wrapped negative and that layout was ranked first).
TEST(Plan, RejectsStepsPastTimesRange) {
  Machine m = fake_machine();
  m.device.peak_bf16 = m.device.peak_fp16 = m.device.peak_fp32 = FlopRate::from_flops(1e-3);
  try {
    plan_layouts(m, plan_test_model(), Batch{32}, 32, StepOptions{});
    ADD_FAILURE() << "a step of 1e16 s was ranked";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("step time below 106 days"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().key, "device.peak");
  }
}

}  // namespace
}  // namespace ws
