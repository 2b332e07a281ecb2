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
#include "base/statistics.hpp"
#include "sim/machine/machine_loader.hpp"
#include "base/input_error.hpp"
#include "tests/sim/step/fake_machine.hpp"

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

// Machine-file variability, one term at a time (sim/step/README.md "Skew and noise").
Machine with_variability(double spread, double noise, Time jitter) {
  Machine m = machine("frontier.yaml");
  m.variability = Variability{spread, noise, jitter};
  return m;
}

// Off (the StepOptions switch, or a machine without variability): no skew, and the same step.
TEST(SimulatedStepVariability, SwitchedOffGivesNoSkewAndTheNoiselessStep) {
  const SimulatedStepConfig on = frontier_sized(Layout{8, 2, 2, 2});
  SimulatedStepConfig off = on;
  off.options.variability = false;
  const Machine noisy = machine("frontier.yaml");
  ASSERT_GT(noisy.variability.device_speed_spread, 0.0);
  const SimulatedStep without = simulate_step(noisy, off);
  EXPECT_EQ(without.skew.seconds(), 0.0);
  EXPECT_EQ(without.step.seconds(), simulate_step(with_variability(0, 0, Time::zero()), on).step.seconds());
  EXPECT_GT(simulate_step(noisy, on).step.seconds(), without.step.seconds());
}

// The slowest device alone: every compute task runs longer by spread x E[max of N normals], the
// job's pace, so the skew is exactly that share of the compute and grows with the job.
TEST(SimulatedStepVariability, SlowestDeviceStretchesComputeByTheExpectedMaximumOfTheJob) {
  const double spread = 0.02;
  const Machine m = with_variability(spread, 0, Time::zero());
  double previous = 0;
  for (const Layout& layout : {Layout{2, 1, 1, 2}, Layout{8, 2, 2, 2}, Layout{64, 2, 2, 4}}) {
    const SimulatedStep step = simulate_step(m, frontier_sized(layout));
    const double expected = step.compute.seconds() * spread * expected_max_of_normals(layout.devices());
    EXPECT_NEAR(step.skew.seconds(), expected, 1e-6 * expected) << to_string(layout);
    const double share = step.skew.seconds() / step.compute.seconds();
    EXPECT_GT(share, previous) << to_string(layout);
    previous = share;
  }
}

// Entry jitter alone: each synchronizing call waits jitter x E[max over the group's members], so
// the skew is linear in the jitter and larger for a larger data-parallel group.
TEST(SimulatedStepVariability, EntryJitterWaitIsLinearAndGrowsWithTheGroup) {
  const SimulatedStepConfig small_group = frontier_sized(Layout{2, 1, 1, 2});
  const SimulatedStepConfig large_group = frontier_sized(Layout{32, 1, 1, 2});
  const double one = simulate_step(with_variability(0, 0, Time::from_us(5)), small_group).skew.seconds();
  const double two = simulate_step(with_variability(0, 0, Time::from_us(10)), small_group).skew.seconds();
  ASSERT_GT(one, 0.0);
  EXPECT_NEAR(two, 2 * one, 1e-6 * two);
  // Same schedule per rank, more data-parallel members to wait for.
  EXPECT_GT(simulate_step(with_variability(0, 0, Time::from_us(5)), large_group).skew.seconds(), one);
}

// Compute noise alone: it accumulates between a group's synchronizations, so it adds skew, and
// more noise never less.
TEST(SimulatedStepVariability, ComputeNoiseAddsWaitsThatGrowWithTheNoise) {
  const SimulatedStepConfig c = frontier_sized(Layout{8, 2, 2, 2});
  const double low = simulate_step(with_variability(0, 0.01, Time::zero()), c).skew.seconds();
  const double high = simulate_step(with_variability(0, 0.03, Time::zero()), c).skew.seconds();
  EXPECT_GT(low, 0.0);
  EXPECT_NEAR(high, 3 * low, 1e-6 * high);
}

TEST(SimulatedStep, OneRankStepIsTheSumOfItsComputeTasks) {
  const Machine local = machine("local.yaml");
  const SimulatedStepConfig c = engine_sized(Layout{});
  const SimulatedStep step = simulate_step(local, c);
  Time sum;
  for (const StepOp& op :
       make_step_schedule(c.model, c.layout, c.sequences, c.options).ops) {
    ASSERT_EQ(op.kind, StepOpKind::compute) << op.name;
    // Element-wise work: the slower of its memory traffic and its calibrated arithmetic.
    Time elementwise = transfer_time(static_cast<double>(op.memory_bytes), local.device.memory_bandwidth);
    if (op.kernel && local.device.elementwise.of(*op.kernel) > 0)
      elementwise = max(elementwise, Time::from_seconds(op.elements / local.device.elementwise.of(*op.kernel)));
    sum += elementwise;
    for (const GemmCall& g : op.gemms)
      sum += gemm_time(local.device, Precision::fp32, static_cast<double>(g.m), static_cast<double>(g.n),
                       static_cast<double>(g.k)) *
             g.count;
  }
  EXPECT_EQ(step.step.seconds(), sum.seconds());
  EXPECT_EQ(step.compute.seconds(), sum.seconds());
  for (const Time t : step.exposed_comm) EXPECT_EQ(t, Time::zero());
  double by_kind = 0;
  for (const Time t : step.compute_by_kind) by_kind += t.seconds();
  EXPECT_NEAR(by_kind, step.compute.seconds(), 1e-12 * step.compute.seconds());
}

// Every combination of the five overlap switches, each switch turned on from it.
TEST(SimulatedStep, TurningAnOverlapOnNeverMakesTheStepSlower) {
  const Machine frontier = machine("frontier.yaml");
  for (const Layout& layout :
       {Layout{8, 2, 2, 2}, Layout{4, 1, 4, 4}, Layout{16, 4, 2, 1}, Layout{2, 2, 1, 8}}) {
    // One job network for the layout's 160 steps (as simulate_step would build each time).
    JobNetwork network(frontier, layout.devices());
    auto simulate = [&](const SimulatedStepConfig& c) {
      const StepSchedule schedule = make_step_schedule(c.model, c.layout, c.sequences, c.options);
      return simulate_schedule(network, schedule, c.options, false);
    };
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
      const double base = simulate(config_with(off)).step.seconds();
      for (int flag = 1; flag <= 8; flag <<= 1) {
        if (off & flag) continue;
        EXPECT_LE(simulate(config_with(off | flag)).step.seconds(), base)
            << to_string(layout) << " switches " << off << " + " << flag;
      }
    }
  }
}

// compute_slowdown: one non-blocking all-reduce over data, C seconds of memory-bound compute, its
// wait. The compute it overlaps is min(C, T), T the call alone, so the step is
// max(C + s min(C, T), T) (variability off), for compute shorter and longer than the call.
TEST(SimulatedStep, OverlappedComputeRunsSlowerByTheLibrarysSlowdown) {
  Machine m = machine("frontier.yaml");
  const double s = 0.25;
  m.collective_libraries.front().compute_slowdown = s;
  const Layout layout{16, 1, 1, 1};
  JobNetwork network(m, layout.devices());
  const CollectiveCall call{CommGroup::data, CollectiveOp::all_reduce, 64 << 20};
  const double alone = collective_time(network, layout, call).seconds();
  StepOptions options;
  options.variability = false;
  for (const double compute_bytes : {1e9, 1e10}) {
    StepSchedule schedule;
    schedule.layout = layout;
    StepOp issue;
    issue.kind = StepOpKind::collective, issue.collective = call.op, issue.group = call.group;
    issue.bytes = call.bytes, issue.blocking = false, issue.partner = 2, issue.name = "allreduce.data";
    StepOp work;
    work.kind = StepOpKind::compute, work.compute = ComputeKind::gelu;
    work.memory_bytes = static_cast<Bytes>(compute_bytes), work.name = "gelu";
    StepOp wait = issue;
    wait.kind = StepOpKind::wait, wait.partner = 0, wait.name = "wait.allreduce.data";
    schedule.ops = {issue, work, wait};
    const double c = compute_bytes / m.device.memory_bandwidth.bytes_per_s();
    for (const CollectiveModel model : {CollectiveModel::closed_form, CollectiveModel::flow}) {
      const SimulatedStep step = simulate_schedule(network, schedule, options, false, model);
      EXPECT_NEAR(step.step.seconds(), std::max(c + s * std::min(c, alone), alone), 1e-9)
          << "compute " << c << " s, call " << alone << " s, " << to_string(model);
      EXPECT_NEAR(step.compute.seconds(), c + s * std::min(c, alone), 1e-9);
      EXPECT_EQ(step.compute_of(ComputeKind::gelu), step.compute);
    }
  }
}

// On whole steps: the slowdown only ever adds compute, at most s times the compute (each stretch is
// charged once however many calls were in flight over it), and nothing when every collective blocks.
TEST(SimulatedStep, ComputeSlowdownIsBoundedAndNeedsOverlap) {
  Machine slowed = machine("frontier.yaml");
  Machine plain = slowed;
  const double s = 0.3;
  slowed.collective_libraries.front().compute_slowdown = s;
  plain.collective_libraries.front().compute_slowdown = 0.0;
  for (const Layout& layout : {Layout{8, 2, 2, 2}, Layout{4, 1, 4, 4}, Layout{2, 2, 1, 8}}) {
    for (const bool overlaps : {true, false}) {
      SimulatedStepConfig c = frontier_sized(layout);
      c.options.recompute = true;
      c.options.overlap_all_reduce = c.options.overlap_reduce_scatter = c.options.overlap_all_gather =
          c.options.overlap_data_parallel = overlaps;
      const SimulatedStep base = simulate_step(plain, c), step = simulate_step(slowed, c);
      if (!overlaps) {
        EXPECT_EQ(step.step, base.step) << to_string(layout);
        EXPECT_EQ(step.compute, base.compute);
        continue;
      }
      EXPECT_GT(step.compute, base.compute) << to_string(layout);
      EXPECT_LE(step.compute.seconds(), (1 + s) * base.compute.seconds() + 1e-12) << to_string(layout);
      EXPECT_GE(step.step, base.step) << to_string(layout);
      double by_kind = 0;
      for (const Time t : step.compute_by_kind) by_kind += t.seconds();
      EXPECT_NEAR(by_kind, step.compute.seconds(), 1e-9 * step.compute.seconds());
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
         make_step_schedule(c.model, c.layout, c.sequences, c.options).ops)
      if (op.kind == StepOpKind::collective) ++scheduled[op.name];
    for (const SimulatedEvent& e : simulate_step(frontier, c).events)
      if (e.comm) ++simulated[e.name];
    EXPECT_FALSE(scheduled.empty());
    EXPECT_EQ(simulated, scheduled) << to_string(layout);
  }
}

// Side by side with the engine: the compute thread shows the schedule's traced phases in order
// (the engine runs the same list: step_schedule_drift_*), each starting when the one before ended or a wait ended.
TEST(SimulatedStep, TraceShowsTheTracedPhasesInScheduleOrder) {
  const Machine frontier = machine("frontier.yaml");
  SimulatedStepConfig c = frontier_sized(Layout{2, 2, 2, 2});
  c.trace = true;
  std::vector<std::string> scheduled, simulated;
  for (const StepOp& op : make_step_schedule(c.model, c.layout, c.sequences, c.options).ops)
    if (op.kind == StepOpKind::compute && op.traced) scheduled.push_back(op.name);
  Time previous_end;
  for (const SimulatedEvent& e : simulate_step(frontier, c).events) {
    if (e.comm) continue;
    EXPECT_GE(e.start, previous_end) << e.name;
    EXPECT_GE(e.end, e.start) << e.name;
    previous_end = e.end;
    if (!e.name.starts_with("wait.")) simulated.push_back(e.name);
  }
  EXPECT_EQ(simulated, scheduled);
}

// With a library the host progresses, the core runs every collective: nothing overlaps, so the step
// is exactly its compute tasks plus every collective's time, and never shorter than with
// asynchronous progress. Non-blocking collectives count as progress (compute), blocking ones as
// exposed.
TEST(SimulatedStep, HostProgressedCollectivesOverlapNothing) {
  Machine host = machine("perlmutter.yaml");
  host.collective_libraries.front().progress = CollectiveProgress::host;
  Machine asynchronous = host;
  asynchronous.collective_libraries.front().progress = CollectiveProgress::asynchronous;
  for (const Layout& layout : {Layout{2, 1, 1, 1}, Layout{1, 2, 1, 1}, Layout{1, 1, 2, 1}, Layout{1, 1, 1, 2},
                               Layout{2, 2, 2, 2}}) {
    SimulatedStepConfig config = engine_sized(layout);
    config.trace = true;
    const SimulatedStep step = simulate_step(host, config);
    double tasks = 0, collectives = 0, progress = 0, exposed = 0;
    for (const Time t : step.compute_by_kind) tasks += t.seconds();
    for (const auto& e : step.events) {
      if (e.comm) collectives += (e.end - e.start).seconds();
    }
    for (const Time t : step.progress_comm) progress += t.seconds();
    for (const Time t : step.exposed_comm) exposed += t.seconds();
    // Waits for the slowest device and group member (skew) come on top of the work itself.
    EXPECT_NEAR(step.step.seconds(), tasks + collectives + step.skew.seconds(), 1e-9 * step.step.seconds()) << to_string(layout);
    EXPECT_NEAR(step.compute.seconds(), tasks + progress, 1e-9 * step.step.seconds()) << to_string(layout);
    EXPECT_NEAR(step.step.seconds(), step.compute.seconds() + exposed + step.skew.seconds(), 1e-9 * step.step.seconds()) << to_string(layout);
    EXPECT_GT(progress, 0.0) << to_string(layout);
    EXPECT_GE(step.step.seconds(), simulate_step(asynchronous, config).step.seconds() * (1 - 1e-12)) << to_string(layout);
  }
}

// The engine tiles dW so that it can move host-progressed collectives between the tiles; a GPU
// library moves on its own, so the step a GPU machine runs has one dW GEMM per layer.
TEST(SimulatedStep, DeviceProgressedLibrariesRunWeightGradientsAsOneGemm) {
  Machine host = machine("perlmutter.yaml");
  host.collective_libraries.front().progress = CollectiveProgress::host;
  const Machine gpu = machine("perlmutter.yaml");
  ASSERT_NE(gpu.collective_libraries.front().progress, CollectiveProgress::host);
  const SimulatedStepConfig c = engine_sized(Layout{2, 1, 2, 1});
  auto tiles = [&](const Machine& m) {
    std::vector<std::size_t> out;
    for (const StepOp& op : machine_step_schedule(m, c.model, c.layout, c.sequences, c.options).ops)
      if (op.task == StepTask::fc_dw_gemm) out.push_back(op.gemms.size());
    return out;
  };
  const auto on_host = tiles(host), on_gpu = tiles(gpu);
  ASSERT_FALSE(on_gpu.empty());
  for (const std::size_t n : on_gpu) EXPECT_EQ(n, 1u);
  for (const std::size_t n : on_host) EXPECT_EQ(n, static_cast<std::size_t>(StepScheduleOptions{}.weight_gradient_tiles));
}

TEST(SimulatedStep, ExposedCommunicationAndComputeMakeUpTheStep) {
  const Machine frontier = machine("frontier.yaml");
  const SimulatedStep step = simulate_step(frontier, frontier_sized(Layout{8, 2, 2, 2}));
  double sum = step.compute.seconds() + step.skew.seconds();
  for (const Time t : step.exposed_comm) sum += t.seconds();
  EXPECT_NEAR(sum, step.step.seconds(), 1e-9 * step.step.seconds());
  EXPECT_GT(step.exposed(CommGroup::x), Time::zero());
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

double kind_s(const SimulatedStep& s, ComputeKind kind) { return s.compute_of(kind).seconds(); }

// GELU's time is its memory traffic until its arithmetic is slower: then elements / throughput.
TEST(SimulatedStep, ElementwiseOpTakesTheSlowerOfMemoryAndArithmetic) {
  Machine local = machine("local.yaml");
  const SimulatedStepConfig c = engine_sized(Layout{});
  double gelu_elements = 0, gelu_bytes = 0;
  for (const StepOp& op : make_step_schedule(c.model, c.layout, c.sequences, c.options).ops) {
    if (op.compute != ComputeKind::gelu) continue;
    ASSERT_TRUE(op.kernel.has_value()) << op.name;
    gelu_elements += op.elements;
    gelu_bytes += static_cast<double>(op.memory_bytes);
  }
  ASSERT_GT(gelu_elements, 0);
  const double memory_s = gelu_bytes / local.device.memory_bandwidth.bytes_per_s();
  for (ElementwiseKernel k : {ElementwiseKernel::gelu_forward, ElementwiseKernel::gelu_backward})
    local.device.elementwise.of(k) = 1e15;  // arithmetic far faster than memory
  EXPECT_NEAR(kind_s(simulate_step(local, c), ComputeKind::gelu), memory_s, 1e-9 + 1e-9 * memory_s);
  for (ElementwiseKernel k : {ElementwiseKernel::gelu_forward, ElementwiseKernel::gelu_backward})
    local.device.elementwise.of(k) = 1e6;  // far slower
  EXPECT_NEAR(kind_s(simulate_step(local, c), ComputeKind::gelu), gelu_elements / 1e6, 1e-9 * gelu_elements / 1e6);
}

// With every core of the node busy each keeps busy_node_compute of its alone rate: GEMM time
// divides by it; memory-bound work does not change; one rank alone is not slowed.
TEST(SimulatedStep, BusyNodeSlowsArithmeticOnlyWhenTheJobFillsTheNode) {
  Machine local = machine("local.yaml");
  ASSERT_EQ(local.node.devices, 2);
  local.device.busy_node_compute = 1.0;
  const SimulatedStepConfig two = engine_sized(Layout{2, 1, 1, 1}), one = engine_sized(Layout{});
  const SimulatedStep full_speed = simulate_step(local, two), alone = simulate_step(local, one);
  local.device.busy_node_compute = 0.5;
  const SimulatedStep busy = simulate_step(local, two);
  EXPECT_NEAR(kind_s(busy, ComputeKind::gemm), 2.0 * kind_s(full_speed, ComputeKind::gemm), 1e-9);
  EXPECT_DOUBLE_EQ(kind_s(busy, ComputeKind::optimizer), kind_s(full_speed, ComputeKind::optimizer));
  EXPECT_DOUBLE_EQ(simulate_step(local, one).step.seconds(), alone.step.seconds());
}

// Fewer ranks per node than devices spread a job over more nodes: a tensor-parallel group that
// fits one node crosses them, and the network prices that; the ranks on a node are what they say.
TEST(SimulatedStep, RanksPerNodeSpreadTheJobOverMoreNodes) {
  const Machine frontier = machine("frontier.yaml");
  SimulatedStepConfig c = frontier_sized(Layout{2, 1, 8, 1});  // Y = 8: one node of 8 GCDs, full
  const SimulatedStep full = simulate_step(frontier, c);
  c.options.ranks_per_node = 2;
  const SimulatedStep quarter = simulate_step(frontier, c);
  const auto y = static_cast<std::size_t>(CommGroup::y);
  EXPECT_GT(quarter.exposed_comm[y].seconds(), 2.0 * full.exposed_comm[y].seconds());
  EXPECT_EQ(JobNetwork(frontier, 16, NodeAllocation::contiguous, 1, 2).job_nodes(), 8);
  EXPECT_EQ(JobNetwork(frontier, 16, NodeAllocation::contiguous, 1, 2).ranks_on_a_node(), 2);
  EXPECT_EQ(JobNetwork(frontier, 16).ranks_on_a_node(), 8);
  EXPECT_THROW(JobNetwork(frontier, 16, NodeAllocation::contiguous, 1, 9), InputError);
  // One rank per node has its node to itself: its GEMMs run at the alone rate, not the busy node's.
  Machine fake = testing::fake_machine();
  fake.device.busy_node_compute = 0.5;
  SimulatedStepConfig four = frontier_sized(Layout{4, 1, 1, 1});
  const SimulatedStep busy = simulate_step(fake, four);
  four.options.ranks_per_node = 1;
  const SimulatedStep alone = simulate_step(fake, four);
  EXPECT_NEAR(kind_s(busy, ComputeKind::gemm), 2.0 * kind_s(alone, ComputeKind::gemm), 1e-9);
}

// A machine with a fused attention rate prices each attention op as that kernel: its causal flops at
// the pass's rate, with no score GEMMs and no softmax traffic; nothing else in the step changes.
TEST(SimulatedStep, FusedAttentionPricesTheAttentionOpsAsTheKernel) {
  Machine local = machine("local.yaml");
  const SimulatedStepConfig c = engine_sized(Layout{});
  const SimulatedStep engine_attention = simulate_step(local, c);
  local.device.fused_attention = FusedAttention{0.4, 0.2};
  const SimulatedStep fused = simulate_step(local, c);
  Time expected;
  int forward = 0, backward = 0;
  for (const StepOp& op : make_step_schedule(c.model, c.layout, c.sequences, c.options).ops) {
    if (op.compute != ComputeKind::attention) continue;
    const GemmCall& scores = op.gemms.front();
    const bool is_backward = op.task == StepTask::attention_backward;
    (is_backward ? backward : forward) += 1;
    const double s = static_cast<double>(scores.m), d = static_cast<double>(scores.k);
    const double flops = static_cast<double>(scores.count) * 2.0 * s * s * d * (is_backward ? 2.5 : 1.0);
    expected += Time::from_seconds(flops / (local.device.peak_fp32.flops() * (is_backward ? 0.2 : 0.4)));
  }
  EXPECT_EQ(forward, c.model.layers);
  EXPECT_EQ(backward, c.model.layers);
  EXPECT_NEAR(kind_s(fused, ComputeKind::attention), expected.seconds(), 1e-9);
  EXPECT_NE(kind_s(fused, ComputeKind::attention), kind_s(engine_attention, ComputeKind::attention));
  EXPECT_DOUBLE_EQ(kind_s(fused, ComputeKind::gemm), kind_s(engine_attention, ComputeKind::gemm));
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// The Llama family's element-wise kernels have rates of their own; a file measured before they
// existed (machines/local.yaml) prices them at their stand-ins' (SwiGLU at GELU's, RMSNorm at
// LayerNorm's), and a file that gives them prices with them.
TEST(SimulatedStep, LlamaKernelsUseTheirOwnRatesOrTheirStandIns) {
  SimulatedStepConfig c = engine_sized(Layout{1, 1, 1, 1});
  c.model.kv_heads = 4;
  c.model = with_llama_architecture(c.model);
  Machine local = machine("local.yaml");
  ASSERT_EQ(local.device.elementwise.of(ElementwiseKernel::swiglu_forward), 0.0);
  const double stand_ins = simulate_step(local, c).compute.seconds();
  Machine same = local;
  for (const ElementwiseKernel k : {ElementwiseKernel::swiglu_forward, ElementwiseKernel::swiglu_backward,
                                    ElementwiseKernel::rms_norm_forward, ElementwiseKernel::rms_norm_backward})
    same.device.elementwise.of(k) = local.device.elementwise.of(stand_in(k));
  EXPECT_EQ(simulate_step(same, c).compute.seconds(), stand_ins);
  Machine faster = same;
  faster.device.elementwise.of(ElementwiseKernel::swiglu_forward) *= 4;
  EXPECT_LT(simulate_step(faster, c).compute.seconds(), stand_ins);
  // A GPT step never runs them.
  SimulatedStepConfig gpt = engine_sized(Layout{1, 1, 1, 1});
  EXPECT_EQ(simulate_step(faster, gpt).compute.seconds(), simulate_step(local, gpt).compute.seconds());
}

// The whole step on the per-send reference (every send of every call its own flow, all calls in
// flight sharing one network beside the rank on the kernel) agrees with the phase model it checks:
// the same compute to the picosecond (without the libraries' compute slowdown, which follows the
// network), and the step within 2 % on small jobs of Frontier and
// Perlmutter (GPU libraries: every collective overlapped where the engine overlaps it).
TEST(SimulatedStep, EveryStepReferenceAgreesWithThePhaseModelOnWholeSteps) {
  for (const char* file : {"frontier.yaml", "perlmutter.yaml"}) {
    Machine m = machine(file);
    m.collective_libraries.front().compute_slowdown = 0;  // compute then does not depend on the network
    for (const Layout& layout : {Layout{8, 1, 1, 1}, Layout{2, 2, 1, 2}, Layout{1, 2, 2, 2}, Layout{2, 1, 1, 8}}) {
      SimulatedStepConfig c = frontier_sized(layout);
      c.model.layers = 4;
      c.collectives = CollectiveModel::flow;
      const SimulatedStep phases = simulate_step(m, c);
      c.collectives = CollectiveModel::every_step;
      const SimulatedStep every = simulate_step(m, c);
      EXPECT_EQ(every.compute, phases.compute) << file << " " << to_string(layout);
      EXPECT_NEAR(every.step.seconds() / phases.step.seconds(), 1.0, 0.02)
          << file << " " << to_string(layout) << ": every step " << every.step.seconds() << " s, phases "
          << phases.step.seconds() << " s";
    }
  }
}

}  // namespace
}  // namespace ws
