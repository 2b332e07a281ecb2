// Layouts of every strategy (4D, Megatron-LM, FSDP / HSDP): their spellings round-trip; an FSDP
// layout without tensor parallelism is its 4D layout op for op; with it, the LM head splits the
// vocabulary over tp and the three extra sums of the vocabulary-parallel loss appear; each
// strategy's enumeration holds the devices and keeps tensor parallelism within a node; plan ranks
// them together, every candidate in exactly one of its lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "sim/layout_search/plan.hpp"
#include "tests/sim/step/fake_machine.hpp"
#include "workload/memory.hpp"
#include "workload/step_schedule.hpp"

namespace ws {
namespace {

const ModelSpec kModel{"small", 4, 1024, 16, 512, 4096, 1};

TEST(Strategy, SpellingsRoundTrip) {
  const Layout megatron = parse_layout("tp=4,pp=2,vpp=2,dp=8,mb=16").value();
  EXPECT_EQ(megatron, (Layout{8, 1, 4, 1, 2, 2, 16, Strategy::megatron}));
  EXPECT_EQ(to_string(megatron), "tp=4,pp=2,vpp=2,dp=8,mb=16");
  EXPECT_EQ(parse_layout("dp=8"), (Layout{8, 1, 1, 1, 1, 1, 1, Strategy::megatron}));
  const Layout fsdp = parse_layout("dp_shard=64,dp_replicate=2,tp=4").value();
  EXPECT_EQ(fsdp, (Layout{2, 1, 4, 64, 1, 1, 1, Strategy::fsdp}));
  EXPECT_EQ(to_string(fsdp), "dp_shard=64,dp_replicate=2,tp=4");
  EXPECT_EQ(to_string(*parse_layout("dp_shard=8")), "dp_shard=8");
  EXPECT_EQ(fsdp.devices(), 512);
  for (const char* bad : {"tp=4", "tp=4,dp=0", "dp=2,dp=2", "dp_shard=4,pp=2", "tp=2,dp=4,", "dp_replicate=2",
                          "tp=x,dp=2"})
    EXPECT_FALSE(parse_layout(bad)) << bad;
}

TEST(Strategy, FsdpWithoutTensorParallelismIsItsFourDLayoutOpForOp) {
  const Layout fsdp = *parse_layout("dp_shard=4,dp_replicate=2");
  const Layout four_d{2, 1, 1, 4};
  EXPECT_EQ(make_step_schedule(kModel, fsdp, 32).ops, make_step_schedule(kModel, four_d, 32).ops);
}

TEST(Strategy, TensorParallelLayoutsSplitTheVocabularyOverTp) {
  const Layout megatron = *parse_layout("tp=4,dp=2");
  const Layout four_d{2, 1, 4, 1};
  auto lm_head = [](const StepSchedule& s) {
    for (const StepOp& op : s.ops)
      if (op.task == StepTask::lm_head_gemm) return op.gemms.front();
    return GemmCall{};
  };
  auto y_sums = [](const StepSchedule& s) {
    int n = 0;
    for (const StepOp& op : s.ops) n += op.kind == StepOpKind::collective && op.group == CommGroup::y;
    return n;
  };
  const StepSchedule split = make_step_schedule(kModel, megatron, 32), whole = make_step_schedule(kModel, four_d, 32);
  EXPECT_EQ(lm_head(split).n, kModel.vocabulary / 4);
  EXPECT_EQ(lm_head(whole).n, kModel.vocabulary);
  // The embedding's sum, the loss's three row sums and the head's input gradient.
  EXPECT_EQ(y_sums(split), y_sums(whole) + 5);
  EXPECT_EQ(rank_tensors(kModel, megatron).front().elements, kModel.vocabulary / 4 * kModel.hidden);
}

TEST(Strategy, EnumerationsHoldTheDevicesAndKeepTensorParallelismOnANode) {
  for (const Strategy s : {Strategy::megatron, Strategy::fsdp}) {
    const auto candidates = enumerate_strategy_layouts(kModel, Batch{64}, 32, s, 4);
    ASSERT_FALSE(candidates.empty());
    std::set<std::string> seen;
    for (const LayoutCandidate& c : candidates) {
      EXPECT_EQ(c.layout.strategy, s);
      EXPECT_TRUE(holds_devices(c.layout, 32)) << to_string(c.layout);
      EXPECT_EQ(4 % c.layout.y, 0) << to_string(c.layout);
      EXPECT_EQ(c.layout.x, 1);
      EXPECT_TRUE(seen.insert(to_string(c.layout)).second) << "twice: " << to_string(c.layout);
      EXPECT_EQ(c.valid, c.reason.empty());
    }
  }
  // FSDP: for each tp of {1, 2, 4}, every divisor of 32 / tp replicates.
  EXPECT_EQ(enumerate_strategy_layouts(kModel, Batch{64}, 32, Strategy::fsdp, 4).size(), 6u + 5u + 4u);
}

// Threads price the layouts on job networks of their own; the plan is the serial one.
TEST(Strategy, PlanOnThreadsIsTheSerialPlan) {
  const Machine m = testing::fake_machine();
  const Strategy all[] = {Strategy::four_d, Strategy::megatron, Strategy::fsdp};
  JobNetwork one(m, 32), two(m, 32);
  const Plan serial = plan_layouts(one, kModel, Batch{64}, StepOptions{}, all, 1);
  const Plan threaded = plan_layouts(two, kModel, Batch{64}, StepOptions{}, all, 3);
  ASSERT_EQ(serial.ranked.size(), threaded.ranked.size());
  for (std::size_t i = 0; i < serial.ranked.size(); ++i) {
    EXPECT_EQ(serial.ranked[i].layout, threaded.ranked[i].layout);
    EXPECT_EQ(serial.ranked[i].step.total(), threaded.ranked[i].step.total());
  }
  EXPECT_EQ(serial.over_memory.size(), threaded.over_memory.size());
  EXPECT_EQ(serial.invalid.size(), threaded.invalid.size());
}

TEST(Strategy, PlanRanksEveryStrategyTogether) {
  const Machine m = testing::fake_machine();
  const Strategy all[] = {Strategy::four_d, Strategy::megatron, Strategy::fsdp};
  const Plan plan = plan_layouts(m, kModel, Batch{64}, 32, StepOptions{}, all);
  std::size_t enumerated = 0;
  for (const Strategy s : all) enumerated += enumerate_strategy_layouts(kModel, Batch{64}, 32, s, 4).size();
  // Every enumerated layout once, and the other rank order of up to 16 of the fastest pipelined
  // Megatron-LM layouts with data parallelism (each beside its default order, priced alike but for
  // where its groups sit).
  std::size_t reordered = 0;
  std::set<std::string> listed;
  for (const auto* list : {&plan.ranked, &plan.over_memory})
    for (const LayoutEstimate& e : *list) {
      EXPECT_TRUE(listed.insert(to_string(e.layout)).second) << to_string(e.layout);
      if (e.layout.order != RankOrder::stages_inside_data) continue;
      ++reordered;
      Layout outer = e.layout;
      outer.order = RankOrder::stages_outermost;
      EXPECT_TRUE(std::any_of(plan.ranked.begin(), plan.ranked.end(),
                              [&](const LayoutEstimate& d) { return d.layout == outer; }))
          << to_string(e.layout);
      EXPECT_GT(e.layout.pipeline, 1);
      EXPECT_GT(e.layout.data, 1);
    }
  EXPECT_GT(reordered, 0u);
  EXPECT_LE(reordered, 16u);
  EXPECT_EQ(plan.ranked.size() + plan.over_memory.size() + plan.invalid.size(), enumerated + reordered);
  std::set<Strategy> ranked;
  for (const LayoutEstimate& e : plan.ranked) ranked.insert(e.layout.strategy);
  EXPECT_EQ(ranked.size(), 3u);
  for (std::size_t i = 1; i < plan.ranked.size(); ++i)
    EXPECT_LE(plan.ranked[i - 1].step.total(), plan.ranked[i].step.total());
  for (const LayoutEstimate& e : plan.ranked) {
    if (!e.layout.pipelined()) {
      EXPECT_EQ(e.step.pipeline, Time::zero()) << to_string(e.layout);
    }
  }
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// Sequence parallelism: the same model work, norms and residuals on 1 / tp of the tokens, the
// row-parallel sums reduce-scattered and the column-parallel inputs gathered, and transfers between
// stages 1 / tp as large.
TEST(Strategy, SequenceParallelismSplitsTheResidualStreamAndKeepsTheGemms) {
  const Layout off = *parse_layout("tp=4,pp=2,dp=2,mb=4");
  const Layout on = *parse_layout("tp=4,pp=2,dp=2,mb=4,sp");
  EXPECT_TRUE(on.sequence_parallel);
  EXPECT_EQ(to_string(on), "tp=4,pp=2,dp=2,mb=4,sp");
  EXPECT_EQ(layout_problem(kModel, Batch{32}, on), "");
  for (int stage = 0; stage < 2; ++stage) {
    const StepSchedule a = make_stage_schedule(kModel, off, 32, stage), b = make_stage_schedule(kModel, on, 32, stage);
    double gemm_a = 0, gemm_b = 0, norm_a = 0, norm_b = 0;
    Bytes sent_a = 0, sent_b = 0;
    int all_reduce_y_a = 0, scatter_y_b = 0, gather_y_b = 0;
    for (const StepOp& op : a.ops) {
      for (const GemmCall& g : op.gemms) gemm_a += g.flops();
      if (op.compute == ComputeKind::layer_norm && op.kind == StepOpKind::compute) norm_a += static_cast<double>(op.memory_bytes);
      if (op.kind == StepOpKind::send) sent_a += op.bytes;
      all_reduce_y_a += op.kind == StepOpKind::collective && op.group == CommGroup::y && op.collective == CollectiveOp::all_reduce;
    }
    for (const StepOp& op : b.ops) {
      for (const GemmCall& g : op.gemms) gemm_b += g.flops();
      if (op.compute == ComputeKind::layer_norm && op.kind == StepOpKind::compute) norm_b += static_cast<double>(op.memory_bytes);
      if (op.kind == StepOpKind::send) sent_b += op.bytes;
      if (op.kind == StepOpKind::collective && op.group == CommGroup::y) {
        scatter_y_b += op.collective == CollectiveOp::reduce_scatter;
        gather_y_b += op.collective == CollectiveOp::all_gather;
      }
    }
    EXPECT_EQ(gemm_b, gemm_a);
    EXPECT_NEAR(norm_b, norm_a / 4, 4.0);
    EXPECT_GT(sent_a, 0u);
    // The tied embedding's gradient exchange is whole; the micro-batches' transfers are a quarter.
    EXPECT_LT(sent_b, sent_a);
    // Every all-reduce over Y of the residual stream becomes a reduce-scatter, with a gather before
    // each column-parallel layer (forward; backward: its input again, and the output gradient).
    EXPECT_GT(scatter_y_b, 0);
    EXPECT_GT(gather_y_b, scatter_y_b);
    EXPECT_GT(all_reduce_y_a, 0);
  }
  EXPECT_NE(layout_problem(kModel, Batch{32}, Layout{2, 1, 4, 1, 1, 1, 1, Strategy::four_d, true}).find("Megatron"),
            std::string::npos);
  EXPECT_LT(estimate_memory(kModel, Batch{32}, on, 2, false).activations_bytes,
            estimate_memory(kModel, Batch{32}, off, 2, false).activations_bytes);
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// The distributed optimizer: the gradients reduce-scattered, the update on 1 / dp of the parameters,
// and their all-gather either after it (blocking) or, with the gradient reduction overlapped
// (--overlap-param-gather), issued at the step's start and waited for before each bucket's first
// forward; the same bytes either way.
TEST(Strategy, DistributedOptimizerGathersWhatItScatters) {
  const Layout zero = *parse_layout("tp=2,dp=4,mb=1,zero=1");
  for (const bool overlap : {false, true}) {
    StepScheduleOptions o;
    o.overlap_data_parallel = overlap;
    const StepSchedule s = make_step_schedule(kModel, zero, 32, o);
    Bytes scattered = 0, gathered = 0;
    int blocking_gathers = 0;
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      const StepOp& op = s.ops[i];
      if (op.kind != StepOpKind::collective || (op.group != CommGroup::data && op.group != CommGroup::data_z)) continue;
      if (op.collective == CollectiveOp::reduce_scatter) scattered += op.bytes;
      if (op.collective == CollectiveOp::all_gather) {
        gathered += op.bytes;
        blocking_gathers += op.blocking;
        if (!op.blocking) {
          ASSERT_NE(op.partner, kNoOp);
          EXPECT_GT(op.partner, i);
        }
      }
      // Only the loss's and the gradient norm's scalars are still all-reduced over data.
      if (op.collective == CollectiveOp::all_reduce) {
        EXPECT_LE(op.bytes, 16u) << op.name;
      }
    }
    EXPECT_GT(scattered, 0u);
    EXPECT_EQ(gathered, scattered) << overlap;
    EXPECT_EQ(blocking_gathers == 0, overlap);
  }
}

// ZeRO stages in Megatron-LM's spelling: 2 is ZeRO-1's step with the gradients sharded in memory;
// 3 puts the data ranks on Z (the parameters sharded, gathered per layer), the FSDP layout's step
// op for op; DeepSpeed's refusal of ZeRO-2 / 3 with pipeline stages, and stages beyond 3.
TEST(Strategy, ZeroStagesTwoAndThree) {
  const Layout one = *parse_layout("tp=2,dp=4,zero=1"), two = *parse_layout("tp=2,dp=4,zero=2");
  const Layout three = *parse_layout("tp=2,dp=4,zero=3");
  EXPECT_EQ(to_string(two), "tp=2,pp=1,dp=4,mb=1,zero=2");
  EXPECT_EQ(to_string(three), "tp=2,pp=1,dp=4,mb=1,zero=3");
  EXPECT_EQ(parse_layout(to_string(three)), three);
  EXPECT_EQ(three.data, 1);
  EXPECT_EQ(three.z, 4);
  EXPECT_EQ(three.devices(), 8);
  EXPECT_EQ(make_step_schedule(kModel, two, 32).ops, make_step_schedule(kModel, one, 32).ops);
  const Layout fsdp = *parse_layout("dp_shard=4,tp=2");
  EXPECT_EQ(make_step_schedule(kModel, three, 32).ops, make_step_schedule(kModel, fsdp, 32).ops);
  const Batch batch{32};
  const MemoryEstimate m0 = estimate_memory(kModel, batch, *parse_layout("tp=2,dp=4"), 2, false);
  const MemoryEstimate m1 = estimate_memory(kModel, batch, one, 2, false);
  const MemoryEstimate m2 = estimate_memory(kModel, batch, two, 2, false);
  const MemoryEstimate m3 = estimate_memory(kModel, batch, three, 2, false);
  EXPECT_EQ(m1.gradients_bytes, m0.gradients_bytes);
  EXPECT_LT(m1.optimizer_bytes, m0.optimizer_bytes);
  EXPECT_EQ(m2.optimizer_bytes, m1.optimizer_bytes);
  EXPECT_LT(m2.gradients_bytes, m1.gradients_bytes);
  EXPECT_LT(m3.weights_bytes, m2.weights_bytes);
  EXPECT_EQ(layout_problem(kModel, batch, two), "");
  EXPECT_EQ(layout_problem(kModel, batch, three), "");
  const std::pair<const char*, const char*> refused[] = {
      {"tp=2,pp=2,dp=2,mb=4,zero=2", "DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism"},
      {"tp=2,pp=2,dp=2,mb=4,zero=3", "DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism"},
      {"tp=2,dp=4,mb=2,zero=3", "zero=3 with mb=2 micro-batches"},
      {"tp=2,dp=4,zero=4", "ZeRO stages are 1, 2 and 3"},
  };
  for (const auto& [text, rule] : refused)
    EXPECT_NE(layout_problem(kModel, batch, *parse_layout(text)).find(rule), std::string::npos) << text;
}

}  // namespace
}  // namespace ws
