// The step simulator's properties: a one-rank step is exactly the sum of its compute tasks; an
// overlap switch never makes a step slower; the same run gives the same trace bytes; the trace
// holds exactly the schedule's collectives.
#include "sim/step/simulated_step.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/compute/gemm_efficiency.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

Machine machine(const char* name) {
  return load_machine(std::string(WEAKSCALE_SOURCE_DIR) + "/machines/" + name);
}

// The engine's validation-sized model: fp32, as weakscale-engine runs it.
SimulatedStepConfig engine_sized(const Layout& layout) {
  SimulatedStepConfig c;
  c.model = ModelSpec{"small", 4, 256, 8, 128, 2048, 1};
  c.layout = layout;
  c.sequences = 8;
  c.options.precision = Precision::fp32;
  c.options.recompute = false;
  c.options.overlap_data_parallel = true;
  return c;
}

SimulatedStepConfig frontier_sized(const Layout& layout) {
  SimulatedStepConfig c;
  c.model = *find_model("5B");
  c.layout = layout;
  c.sequences = 64L * layout.data * layout.z / 8;
  return c;
}

TEST(SimulatedStep, OneRankStepIsTheSumOfItsComputeTasks) {
  const Machine local = machine("local.yaml");
  const SimulatedStepConfig c = engine_sized(Layout{});
  const SimulatedStep step = simulate_step(local, c);
  Time sum;
  for (const StepOp& op :
       make_step_schedule(c.model, c.layout, c.sequences, schedule_options(c.options)).ops) {
    ASSERT_EQ(op.kind, StepOpKind::compute) << op.name;
    sum += transfer_time(op.memory_bytes, local.device.memory_bandwidth);
    for (const GemmCall& g : op.gemms)
      sum += gemm_time(local.device, Precision::fp32, static_cast<double>(g.m), static_cast<double>(g.n),
                       static_cast<double>(g.k)) *
             g.count;
  }
  EXPECT_EQ(step.step_s, sum.seconds());
  EXPECT_EQ(step.compute_s, sum.seconds());
  ASSERT_EQ(step.exposed_comm_s.size(), 5u);
  for (const auto& [group, seconds] : step.exposed_comm_s) EXPECT_EQ(seconds, 0.0) << group;
  double by_kind = 0;
  for (const auto& [kind, seconds] : step.compute_by_kind_s) by_kind += seconds;
  EXPECT_NEAR(by_kind, step.compute_s, 1e-12 * step.compute_s);
}

// Every combination of the five overlap switches, each switch turned on from it.
TEST(SimulatedStep, TurningAnOverlapOnNeverMakesTheStepSlower) {
  const Machine frontier = machine("frontier.yaml");
  for (const Layout& layout :
       {Layout{8, 2, 2, 2}, Layout{4, 1, 4, 4}, Layout{16, 4, 2, 1}, Layout{2, 2, 1, 8}}) {
    for (int off = 0; off < 32; ++off) {
      auto config_with = [&](int bits) {
        SimulatedStepConfig c = frontier_sized(layout);
        c.options.overlap_all_reduce = bits & 1;
        c.options.overlap_reduce_scatter = bits & 2;
        c.options.overlap_all_gather = bits & 4;
        c.options.overlap_data_parallel = bits & 8;
        c.options.recompute = bits & 16;
        return c;
      };
      const double base = simulate_step(frontier, config_with(off)).step_s;
      for (int flag = 1; flag <= 8; flag <<= 1) {
        if (off & flag) continue;
        EXPECT_LE(simulate_step(frontier, config_with(off | flag)).step_s, base)
            << to_string(layout) << " switches " << off << " + " << flag;
      }
    }
  }
}

std::string trace_bytes(const Machine& m, const SimulatedStepConfig& c, const std::string& path) {
  write_simulated_trace(simulate_step(m, c), path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SimulatedStep, SameRunGivesTheSameTraceBytes) {
  const Machine frontier = machine("frontier.yaml");
  SimulatedStepConfig c = frontier_sized(Layout{8, 2, 2, 2});
  c.trace = true;
  const std::string dir = ::testing::TempDir();
  const std::string first = trace_bytes(frontier, c, dir + "/step_a.json");
  const std::string second = trace_bytes(frontier, c, dir + "/step_b.json");
  EXPECT_GT(first.size(), 1000u);
  EXPECT_EQ(first, second);
}

TEST(SimulatedStep, TraceHoldsExactlyTheScheduledCollectives) {
  const Machine frontier = machine("frontier.yaml");
  for (const Layout& layout : {Layout{8, 2, 2, 2}, Layout{1, 2, 4, 1}, Layout{4, 1, 1, 2}}) {
    SimulatedStepConfig c = frontier_sized(layout);
    c.trace = true;
    std::map<std::string, int> scheduled, simulated;
    for (const StepOp& op :
         make_step_schedule(c.model, c.layout, c.sequences, schedule_options(c.options)).ops)
      if (op.kind == StepOpKind::collective) ++scheduled[op.name];
    for (const SimulatedEvent& e : simulate_step(frontier, c).events)
      if (e.comm) ++simulated[e.name];
    EXPECT_FALSE(scheduled.empty());
    EXPECT_EQ(simulated, scheduled) << to_string(layout);
  }
}

// Side by side with the engine: the compute thread shows the schedule's traced phases in order
// (the engine's, by the drift tests), each starting when the one before ended or a wait ended.
TEST(SimulatedStep, TraceShowsTheTracedPhasesInScheduleOrder) {
  const Machine frontier = machine("frontier.yaml");
  SimulatedStepConfig c = frontier_sized(Layout{2, 2, 2, 2});
  c.trace = true;
  std::vector<std::string> scheduled, simulated;
  for (const StepOp& op : make_step_schedule(c.model, c.layout, c.sequences, schedule_options(c.options)).ops)
    if (op.kind == StepOpKind::compute && op.traced) scheduled.push_back(op.name);
  double previous_end = 0;
  for (const SimulatedEvent& e : simulate_step(frontier, c).events) {
    if (e.comm) continue;
    EXPECT_GE(e.start_us, previous_end) << e.name;
    EXPECT_GE(e.end_us, e.start_us) << e.name;
    previous_end = e.end_us;
    if (!e.name.starts_with("wait.")) simulated.push_back(e.name);
  }
  EXPECT_EQ(simulated, scheduled);
}

TEST(SimulatedStep, ExposedCommunicationAndComputeMakeUpTheStep) {
  const Machine frontier = machine("frontier.yaml");
  const SimulatedStep step = simulate_step(frontier, frontier_sized(Layout{8, 2, 2, 2}));
  double sum = step.compute_s;
  for (const auto& [group, seconds] : step.exposed_comm_s) sum += seconds;
  EXPECT_NEAR(sum, step.step_s, 1e-9 * step.step_s);
  EXPECT_GT(step.exposed_comm_s.at("x"), 0.0);
}

}  // namespace
}  // namespace ws
