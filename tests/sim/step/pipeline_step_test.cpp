// Pipeline stages on the step simulator and in the step schedule: every stage's passes partition
// the model's work; each send has its receive; the bubble comes out of the stages' schedules as the
// closed form of 1F1B says it must on a network that costs next to nothing; interleaving over vpp
// chunks divides it by vpp; no layout of a grid of stages, chunks and micro-batches deadlocks; the
// step is the last stage's parts; same inputs, same step.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "sim/layout_search/layout_enumeration.hpp"
#include "sim/step/simulated_step.hpp"
#include "tests/sim/step/fake_machine.hpp"
#include "workload/pipeline.hpp"
#include "workload/step_schedule.hpp"

namespace ws {
namespace {

// Small vocabulary: the first and last stages' embedding and head cost next to nothing.
const ModelSpec kModel{"pipe", 8, 1024, 8, 512, 64, 1};

SimulatedStepConfig pipeline_config(const Layout& layout, CollectiveModel collectives = CollectiveModel::flow) {
  SimulatedStepConfig c;
  c.model = kModel;
  c.layout = layout;
  c.sequences = 8L * layout.data * layout.micro_batches;
  c.options.variability = false;
  c.collectives = collectives;
  return c;
}

double gemm_flops(const StepSchedule& s) {
  double flops = 0;
  for (const StepOp& op : s.ops)
    for (const GemmCall& g : op.gemms) flops += g.flops();
  return flops;
}

TEST(PipelineSchedule, ActionsRunEveryMicroBatchOfEveryChunkForwardBeforeBackward) {
  for (const Layout& l : {Layout{1, 1, 1, 1, 4, 1, 8}, Layout{1, 1, 1, 1, 4, 1, 2}, Layout{1, 1, 1, 1, 4, 2, 8}}) {
    for (int s = 0; s < l.pipeline; ++s) {
      const auto actions = pipeline_actions(l, s);
      ASSERT_EQ(actions.size(), 2u * l.micro_batches * l.virtual_stages);
      std::map<std::tuple<bool, int, int>, int> seen;
      for (std::size_t i = 0; i < actions.size(); ++i) {
        const PipelineAction& a = actions[i];
        const auto key = std::make_tuple(a.forward, a.chunk, a.micro_batch);
        EXPECT_EQ(++seen[key], 1) << to_string(l) << " stage " << s;
        if (!a.forward) {
          EXPECT_EQ(seen.count(std::make_tuple(true, a.chunk, a.micro_batch)), 1u) << "backward before its forward";
        }
      }
    }
  }
  // 1F1B: the last stage alternates from the start; stage 0 runs pp - 1 forwards first.
  const Layout l{1, 1, 1, 1, 4, 1, 8};
  EXPECT_EQ(warmup_forwards(l, 3), 0);
  EXPECT_EQ(warmup_forwards(l, 0), 3);
}

TEST(PipelineSchedule, StagesPartitionTheModelsWorkAndEverySendHasItsReceive) {
  const Layout plain{2, 1, 1, 1};
  const double whole = gemm_flops(make_step_schedule(kModel, plain, 16));
  // Layers that do not divide over the chunks: the first chunks hold a block more (3 3 2, and 2 1 ... 1).
  for (const Layout& l : {Layout{2, 1, 1, 1, 1, 1, 4}, Layout{2, 1, 1, 1, 4, 1, 4}, Layout{2, 1, 1, 1, 2, 2, 4},
                          Layout{2, 1, 1, 1, 4, 2, 8}, Layout{2, 1, 1, 1, 3, 1, 4}, Layout{2, 1, 1, 1, 7, 1, 8}}) {
    ASSERT_EQ(layout_problem(kModel, Batch{16}, l), "") << to_string(l);
    double flops = 0;
    // (from, to, stream) -> bytes sent and received, counted per op.
    std::map<std::tuple<int, int, int>, std::pair<Bytes, Bytes>> moved;
    std::map<std::tuple<int, int, int>, std::pair<int, int>> counts;
    for (int s = 0; s < l.pipeline; ++s) {
      const StepSchedule stage = make_stage_schedule(kModel, l, 16, s);
      flops += gemm_flops(stage);
      for (const StepOp& op : stage.ops) {
        if (op.kind == StepOpKind::send) {
          const auto key = std::make_tuple(s, op.peer_stage, static_cast<int>(op.stream));
          moved[key].first += op.bytes, ++counts[key].first;
        } else if (op.kind == StepOpKind::receive) {
          const auto key = std::make_tuple(op.peer_stage, s, static_cast<int>(op.stream));
          moved[key].second += op.bytes, ++counts[key].second;
        }
      }
    }
    EXPECT_NEAR(flops, whole, whole * 1e-12) << to_string(l);
    for (const auto& [key, bytes] : moved) {
      EXPECT_EQ(bytes.first, bytes.second) << to_string(l);
      EXPECT_EQ(counts[key].first, counts[key].second) << to_string(l);
    }
    // Activations and their gradients: one transfer per micro-batch per virtual-stage boundary each
    // way, plus the tied embedding's gradient both ways between the first and last stage.
    int transfers = 0;
    for (const auto& [key, c] : counts) transfers += c.first;
    const int boundaries = l.pipeline * l.virtual_stages - 1;
    EXPECT_EQ(transfers, 2 * boundaries * l.micro_batches + (l.pipeline > 1 ? 2 : 0)) << to_string(l);
  }
}

TEST(PipelineSchedule, LayoutRulesNameWhatDoesNotDivide) {
  const Batch batch{16};
  EXPECT_NE(layout_problem(kModel, batch, Layout{1, 1, 1, 1, 3, 3, 3}).find("layers 8 fewer than pp*vpp=9"),
            std::string::npos);
  EXPECT_EQ(layout_problem(kModel, batch, Layout{1, 1, 1, 1, 3, 1, 4}), "");
  EXPECT_NE(layout_problem(kModel, batch, Layout{1, 1, 1, 1, 2, 2, 3}).find("divisible by pp=2"), std::string::npos);
  EXPECT_NE(layout_problem(kModel, batch, Layout{1, 1, 1, 2, 2, 1, 2}).find("Gz=2"), std::string::npos);
  EXPECT_NE(layout_problem(kModel, batch, Layout{2, 1, 1, 1, 2, 1, 3}).find("Gdata*Gz*mb=6"), std::string::npos);
  EXPECT_EQ(parse_layout("2x1x4x1/pp=4,vpp=2,mb=16"), (Layout{2, 1, 4, 1, 4, 2, 16}));
  EXPECT_EQ(to_string(Layout{2, 1, 4, 1, 4, 2, 16}), "2x1x4x1/pp=4,vpp=2,mb=16");
  EXPECT_EQ(to_string(Layout{2, 1, 4, 1, 4, 1, 16}), "2x1x4x1/pp=4,mb=16");
  EXPECT_FALSE(parse_layout("2x1x4x1/pp=4,pp=2"));
  EXPECT_FALSE(parse_layout("2x1x4x1/pp=0"));
  EXPECT_FALSE(parse_layout("2x1x4x1/tp=2"));
  EXPECT_FALSE(parse_layout("2x1x4x1/"));
}

// With every link a thousand times faster, a transfer costs microseconds: 1F1B idles its first
// stage for (pp - 1) forward-and-backward passes, interleaving over vpp chunks for 1 / vpp of that.
TEST(PipelineStep, TheBubbleIsOneF1BsClosedFormAndInterleavingDividesIt) {
  const Machine m = testing::scale_bandwidths(testing::fake_machine(), 1e3);
  for (const int mb : {4, 8, 16}) {
    const Layout l{1, 1, 1, 1, 4, 1, mb};
    const SimulatedStep s = simulate_step(m, pipeline_config(l));
    const SimulatedStep one = simulate_step(m, pipeline_config(Layout{1, 1, 1, 1, 1, 1, mb}));
    // A stage's passes: a quarter of the whole model's (the embedding and head are small).
    const double pass = s.compute.seconds() / mb;
    EXPECT_NEAR(s.pipeline_bubble.seconds(), 3 * pass, 0.03 * 3 * pass) << mb;
    EXPECT_NEAR(s.compute.seconds(), one.compute.seconds() / 4, 0.02 * one.compute.seconds() / 4);
    EXPECT_LT(s.pipeline_transfer.seconds(), 0.01 * s.step.seconds());
    const SimulatedStep interleaved = simulate_step(m, pipeline_config(Layout{1, 1, 1, 1, 4, 2, mb}));
    // Twice the transfers, each a few microseconds of latency on the critical path: 8 %.
    EXPECT_NEAR(interleaved.pipeline_bubble.seconds(), 1.5 * pass, 0.08 * 1.5 * pass) << mb;
    EXPECT_LT(interleaved.step, s.step);
  }
}

Time sum_of_parts(const SimulatedStep& s) {
  Time parts = s.compute + s.skew + s.pipeline_bubble + s.pipeline_transfer;
  for (const Time t : s.exposed_comm) parts += t;
  return parts;
}

// Every stage starts at the step's start: its time is all compute, waits, bubble and transfers.
// (A stage that ran ahead alone once moved the kernel's clock before its peers started, and the
// closed form, whose calls end without events, started stages 1..pp-1 late by up to half a step.)
TEST(PipelineStep, EveryStagesTimeIsItsParts) {
  const Machine m = testing::fake_machine();
  for (const Layout& l : {Layout{2, 1, 2, 1, 4, 1, 8}, Layout{1, 1, 1, 1, 4, 1, 16}, Layout{2, 1, 2, 1, 4, 2, 16}}) {
    for (const CollectiveModel c : {CollectiveModel::flow, CollectiveModel::closed_form}) {
      const SimulatedStepConfig config = pipeline_config(l, c);
      const std::vector<StepSchedule> schedules =
          machine_stage_schedules(m, config.model, l, config.sequences, config.options, OpNames::none);
      JobNetwork network(m, l.devices(), config.options.allocation);
      const std::vector<SimulatedStep> stages = simulate_stages(network, schedules, config.options, false, c);
      ASSERT_EQ(stages.size(), static_cast<std::size_t>(l.pipeline));
      for (const SimulatedStep& s : stages)
        EXPECT_EQ(sum_of_parts(s), s.step) << to_string(l) << " stage " << s.stage << " model " << static_cast<int>(c);
    }
  }
}

TEST(PipelineStep, TheStepIsItsLastStagesPartsAndRepeats) {
  const Machine m = testing::fake_machine();
  for (const Layout& l : {Layout{2, 1, 2, 1, 4, 1, 8}, Layout{2, 2, 1, 1, 2, 2, 4}}) {
    for (const CollectiveModel c : {CollectiveModel::flow, CollectiveModel::closed_form}) {
      const SimulatedStep s = simulate_step(m, pipeline_config(l, c));
      EXPECT_EQ(sum_of_parts(s), s.step) << to_string(l);
      const SimulatedStep again = simulate_step(m, pipeline_config(l, c));
      EXPECT_EQ(again.step, s.step);
      EXPECT_EQ(again.pipeline_bubble, s.pipeline_bubble);
    }
  }
}

// Transfers between stages on other nodes cross the NICs: slower links, longer transfers.
TEST(PipelineStep, TransfersAreFlowsBetweenTheStagesNodes) {
  const Layout l{4, 1, 1, 1, 2, 1, 4};  // a stage per node of 4 devices
  const SimulatedStep fast = simulate_step(testing::fake_machine(), pipeline_config(l));
  const SimulatedStep slow = simulate_step(testing::scale_bandwidths(testing::fake_machine(), 0.1), pipeline_config(l));
  EXPECT_GT(fast.pipeline_transfer, Time::zero());
  EXPECT_GT(slow.pipeline_transfer.seconds(), 5.0 * fast.pipeline_transfer.seconds());
}

TEST(PipelineStep, NoLayoutOfTheGridDeadlocks) {
  const Machine m = testing::fake_machine();
  for (const int pp : {2, 4, 8})
    for (const int vpp : {1, 2})
      for (const int mb : {1, 2, pp, 2 * pp, 3 * pp}) {
        const Layout l{1, 1, 1, 1, pp, vpp, mb};
        if (!layout_problem(kModel, Batch{8L * mb}, l).empty()) continue;
        for (const CollectiveModel c : {CollectiveModel::flow, CollectiveModel::closed_form})
          EXPECT_NO_THROW(simulate_step(m, pipeline_config(l, c))) << to_string(l);
      }
}

}  // namespace
}  // namespace ws
