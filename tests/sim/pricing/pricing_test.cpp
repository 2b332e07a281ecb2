// The two collective models: the closed form against the every-step flow reference where links
// are not shared, and the flow model's sharing, conservation and determinism.
#include "sim/pricing/collective_pricing.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <span>
#include <vector>

#include "sim/pricing/collective_job.hpp"
#include "sim/pricing/every_step.hpp"
#include "sim/pricing/flow_pricing.hpp"
#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

using namespace ws::literals;

// A small dragonfly: 3 groups of 4 switches, 4 nodes per group, 2 devices and 2 NICs per node.
Machine small(RoutingPolicy routing) {
  Machine m = testing::small_machine(3, 4, 4, 2, 2, 2, 200.0, 50.0);
  m.network.routing = routing;
  return m;
}

double relative(Time a, Time b) { return std::abs(a.seconds() - b.seconds()) / b.seconds(); }

struct AgreementCase {
  Layout layout;
  CommGroup group;
  CollectiveAlgorithm algorithm;
  CollectiveOp op;
};

// The largest relative difference between the closed form and the every-step flows over sizes
// from 64 KiB to 64 MiB, both routings, printing every case beyond `bound`.
double worst_disagreement(std::span<const AgreementCase> cases, double bound) {
  double worst = 0.0;
  for (const RoutingPolicy routing : {RoutingPolicy::minimal, RoutingPolicy::adaptive}) {
    const Machine m = small(routing);
    for (const AgreementCase& c : cases) {
      JobNetwork network(m, c.layout.devices());
      const GroupGeometry g = geometry(c.layout, c.group);
      for (const Bytes bytes : {Bytes{64} << 10, Bytes{4} << 20, Bytes{64} << 20}) {
        const Time closed = program_time(network.program(g, c.algorithm, c.op, bytes, false),
                                         m.collective_libraries.front(), bytes, 0.0);
        const EveryStepResult flows = every_step_collective(network, g, c.algorithm, c.op, bytes);
        const double d = relative(closed, flows.time);
        worst = std::max(worst, d);
        EXPECT_LT(d, bound) << to_string(routing) << " " << to_string(c.layout) << " " << to_string(c.group) << " "
                            << to_string(c.algorithm) << " " << to_string(c.op) << " " << bytes << " B: closed form "
                            << closed.us() << " us, every step " << flows.time.us() << " us";
      }
    }
  }
  return worst;
}

// Each group kind alone, rings of every op, several sizes, where no link carries two flows: the
// closed form prices the ring by its most loaded link and its hop latencies by the slowest chain
// of hops; the reference runs every step of every member as its own flow. They agree within 2 %.
TEST(ClosedForm, AgreesWithTheEveryStepFlowsWhereLinksAreNotShared) {
  std::vector<AgreementCase> cases;
  const std::pair<Layout, CommGroup> groups[] = {
      {{1, 2, 1, 1}, CommGroup::x},      // one node's pair: the intra-node link
      {{12, 2, 1, 1}, CommGroup::data},  // one member per node, own NIC, rings across the three groups
      {{2, 2, 2, 3}, CommGroup::z},      // 3 members, 2 nodes apart
      {{1, 2, 4, 1}, CommGroup::y},      // 4 members, one per node
  };
  for (const auto& [layout, group] : groups) {
    for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter})
      cases.push_back({layout, group, CollectiveAlgorithm::ring, op});
  }
  EXPECT_LT(worst_disagreement(cases, 0.02), 0.02);
}

// The flow model's shortcuts (a ring's steps merged into one phase advanced in one event, every
// communicator of a kind solved as one shaped flow with link multiplicities) against the reference
// that runs every step of every member as its own flow: within 1 % for rings of every op where no
// link is shared, on 1-4 data groups at once (every communicator of the kind in flight together).
TEST(FlowModel, MergedRingStepsAndSymmetricGroupsStayWithinOnePercentOfEveryStep) {
  const std::pair<Layout, CommGroup> groups[] = {
      {{1, 2, 1, 1}, CommGroup::x},      // one node's pair: the intra-node link
      {{12, 2, 1, 1}, CommGroup::data},  // 2 rings, one member per node, own NIC, across three groups
      {{1, 2, 4, 1}, CommGroup::y},      // 2 rings of 4 members
      {{6, 1, 1, 4}, CommGroup::data},   // 4 rings of 6 members, members 2 nodes apart
  };
  int compared = 0;
  for (const RoutingPolicy routing : {RoutingPolicy::minimal, RoutingPolicy::adaptive}) {
    Machine m = small(routing);
    m.collective_libraries.front().name = "nccl";  // rings for every op at these sizes
    for (const auto& [layout, group] : groups) {
      JobNetwork network(m, layout.devices());
      const GroupGeometry g = geometry(layout, group);
      for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
        for (const Bytes bytes : {Bytes{16} << 20, Bytes{64} << 20}) {
          Simulation sim;
          FlowPricing pricing(network, layout, sim);
          const Time flow = pricing.finish(pricing.issue(Time::zero(), CollectiveCall{group, op, bytes}));
          if (pricing.algorithm(0) != CollectiveAlgorithm::ring) continue;
          ++compared;
          const Time every = every_step_collective(network, g, CollectiveAlgorithm::ring, op, bytes).time;
          EXPECT_LT(relative(flow, every), 0.01)
              << to_string(routing) << " " << to_string(layout) << " " << to_string(group) << " " << to_string(op)
              << " " << bytes << " B: flow " << flow.us() << " us, every step " << every.us() << " us";
        }
      }
    }
  }
  EXPECT_GE(compared, 40);  // of 48: a tiny all-reduce may take NCCL's tree
}

// The every-step reference at scale: on a uniform dragonfly (25 GB/s everywhere, one device and
// one NIC per node) a 1 GiB ring over every node, all-gather and all-reduce, takes what the merged
// phases say within 1 %. Members pace their sends by their receives and by their buffer slots (as
// the libraries do), so none runs ahead and starves the oldest sends. CI runs 512 ranks;
// WEAKSCALE_SWEEP=full (scripts/property-sweep.sh) adds 2,048 and 8,192 (134 million sends).
TEST(FlowModel, EveryStepRingsMatchThePhasesOnUniformDragonfliesAtScale) {
  const char* sweep = std::getenv("WEAKSCALE_SWEEP");
  std::vector<int> sizes{512};
  if (sweep != nullptr && std::string(sweep) == "full") sizes.insert(sizes.end(), {2048, 8192});
  for (const int ranks : sizes) {
    const int groups = ranks / 64;
    Machine m = testing::small_machine(groups, 16, 64, 1, 1, std::max(1, 64 / groups), 200.0, 200.0);
    m.collective_libraries.front().name = "nccl";  // rings at 1 GiB
    const Layout layout{ranks, 1, 1, 1};
    JobNetwork network(m, layout.devices());
    for (const CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::all_reduce}) {
      const Bytes bytes = Bytes{1} << 30;
      Simulation pricing_kernel;
      FlowPricing pricing(network, layout, pricing_kernel);
      const Time phases = pricing.finish(pricing.issue(Time::zero(), CollectiveCall{CommGroup::data, op, bytes}));
      ASSERT_EQ(pricing.algorithm(0), CollectiveAlgorithm::ring);
      const Time every = every_step_collective(network, geometry(layout, CommGroup::data), CollectiveAlgorithm::ring, op,
                                               bytes, std::uint64_t{1} << 40)
                             .time;
      EXPECT_LT(relative(phases, every), 0.01)
          << ranks << " ranks " << to_string(op) << ": phases " << phases.seconds() << " s, every step "
          << every.seconds() << " s";
    }
  }
}

// Where they differ, and by how much (sim/step/README.md): links shared by several flows (the data
// rings of 3x2x2x2 share global links, two ring channels share a node's NICs), which per-flow max-min
// lets one flow use while another pays a step latency, and the tree and binomial algorithms, whose
// members do not move in lockstep. Within 10 %.
TEST(ClosedForm, StaysNearTheEveryStepFlowsWhereLinksAreSharedOrMembersDrift) {
  const std::vector<AgreementCase> cases{
      {{3, 2, 2, 2}, CommGroup::data, CollectiveAlgorithm::ring, CollectiveOp::all_reduce},
      {{1, 1, 8, 1}, CommGroup::y, CollectiveAlgorithm::ring, CollectiveOp::all_gather},
      {{12, 2, 1, 1}, CommGroup::data, CollectiveAlgorithm::tree, CollectiveOp::all_reduce},
      {{1, 1, 8, 1}, CommGroup::y, CollectiveAlgorithm::tree, CollectiveOp::all_reduce},
      {{12, 2, 1, 1}, CommGroup::data, CollectiveAlgorithm::binomial, CollectiveOp::all_reduce},
      {{8, 2, 1, 1}, CommGroup::data, CollectiveAlgorithm::rhd, CollectiveOp::all_reduce},
      {{1, 2, 2, 4}, CommGroup::z, CollectiveAlgorithm::rhd, CollectiveOp::all_gather},
  };
  EXPECT_LT(worst_disagreement(cases, 0.10), 0.10);
}

// Z and data both leave every node through its one NIC: run together on the flow network, each
// takes longer than alone and no longer than the two back to back.
TEST(FlowModel, TwoCollectivesSharingANicEachTakeLongerThanAloneAndNoLongerThanBackToBack) {
  Machine m = testing::small_machine(2, 4, 4, 1, 1, 2, 200.0, 200.0);
  const Layout layout{2, 1, 1, 4};  // Z: 4 consecutive nodes; data: 2 nodes 4 apart
  const CollectiveCall z{CommGroup::z, CollectiveOp::all_gather, 16_MiB};
  const CollectiveCall data{CommGroup::data, CollectiveOp::all_reduce, 16_MiB};
  JobNetwork network(m, layout.devices());
  Time alone_z, alone_data;
  {
    Simulation p_kernel;
    FlowPricing p(network, layout, p_kernel);
    alone_z = p.finish(p.issue(Time::zero(), z));
  }
  {
    Simulation p_kernel;
    FlowPricing p(network, layout, p_kernel);
    alone_data = p.finish(p.issue(Time::zero(), data));
  }
  EXPECT_EQ(alone_z, collective_time(network, layout, z));
  EXPECT_EQ(alone_data, collective_time(network, layout, data));
  Simulation both_kernel;
  FlowPricing both(network, layout, both_kernel);
  const int a = both.issue(Time::zero(), z);
  const int b = both.issue(Time::zero(), data);
  const Time end_a = both.finish(a), end_b = both.finish(b);
  EXPECT_GT(end_a, alone_z);
  EXPECT_GT(end_b, alone_data);
  EXPECT_LE(end_a, alone_z + alone_data);
  EXPECT_LE(end_b, alone_z + alone_data);
}

// Pipelined steps (NCCL's chunks in flight): each phase costs sqrt(latency^2 + transfer^2) where
// serial steps cost the sum, so a pipelined call is never slower, and never faster than the larger
// part of any phase; the flow model with the call alone gives the same time.
TEST(Pipelining, APhaseCostsTheQuadratureOfItsLatencyAndTransfer) {
  Machine m = testing::small_machine(2, 4, 4, 1, 1, 2, 200.0, 200.0);
  const Layout layout{1, 1, 1, 8};
  JobNetwork network(m, layout.devices());
  const GroupGeometry g = geometry(layout, CommGroup::z);
  for (const Bytes bytes : {Bytes{64} << 10, Bytes{4} << 20, Bytes{256} << 20}) {
    CollectiveLibrary serial = m.collective_libraries.front();
    serial.step_overlap = StepOverlap::serial;
    CollectiveLibrary piped = serial;
    piped.step_overlap = StepOverlap::pipelined;
    const PricedProgram& program = network.program(g, CollectiveAlgorithm::ring, CollectiveOp::all_gather, bytes, false);
    double expected = call_latency(program, piped).seconds();
    for (const PricedPhase& p : program.phases) {
      const double l = phase_latency(program, p, piped, bytes).seconds();
      const double t = phase_wire_bytes(p, piped, bytes, 0) * p.time_per_byte.seconds_per_byte();
      expected += std::sqrt(l * l + t * t);
    }
    const Time pipelined = program_time(program, piped, bytes, 0);
    EXPECT_NEAR(pipelined.seconds(), expected, 1e-11) << bytes;
    EXPECT_LT(pipelined, program_time(program, serial, bytes, 0)) << bytes;

    m.collective_libraries.front() = piped;
    JobNetwork piped_network(m, layout.devices());
    Simulation flow_kernel;
    FlowPricing flow(piped_network, layout, flow_kernel);
    const CollectiveCall call{CommGroup::z, CollectiveOp::all_gather, bytes};
    EXPECT_EQ(flow.finish(flow.issue(Time::zero(), call)), collective_time(piped_network, layout, call)) << bytes;
  }
}

// A library with LL and LL128 beside its own terms runs each call with whichever prices fastest:
// LL's short step for small messages, LL128 in between, its own bandwidth for large ones; the
// price is the smallest of the three variants' prices, and the flow model with the call alone
// charges the same protocol.
TEST(Protocols, EachCallRunsTheProtocolThatPricesFastest) {
  Machine m = testing::small_machine(2, 4, 4, 1, 1, 2, 200.0, 200.0);
  CollectiveLibrary& library = m.collective_libraries.front();
  library.step_latency = 20_us;
  library.bandwidth_efficiency = 0.9;
  library.step_overlap = StepOverlap::pipelined;
  library.protocols = {ProtocolTerms{"LL", 3_us, 0.05}, ProtocolTerms{"LL128", 8_us, 0.3}};
  const Layout layout{1, 1, 1, 8};
  JobNetwork network(m, layout.devices());
  const GroupGeometry g = geometry(layout, CommGroup::z);
  std::vector<int> chosen;
  for (const Bytes bytes : {Bytes{16} << 10, Bytes{1} << 20, Bytes{1} << 30}) {
    const PricedProgram& program = network.program(g, CollectiveAlgorithm::ring, CollectiveOp::all_gather, bytes, false);
    const int protocol = fastest_protocol(program, library, bytes, 0);
    chosen.push_back(protocol);
    Time cheapest = program_time(program, protocol_variant(library, kOwnProtocol), bytes, 0);
    for (int p = 0; p < 2; ++p) cheapest = std::min(cheapest, program_time(program, protocol_variant(library, p), bytes, 0));
    EXPECT_EQ(program_time(program, library, bytes, 0), cheapest) << bytes;
    JobNetwork flow_network(m, layout.devices());
    Simulation flow_kernel;
    FlowPricing flow(flow_network, layout, flow_kernel);
    const CollectiveCall call{CommGroup::z, CollectiveOp::all_gather, bytes};
    EXPECT_EQ(flow.finish(flow.issue(Time::zero(), call)), collective_time(flow_network, layout, call)) << bytes;
  }
  // Small to large: LL, LL128, the library's own terms.
  EXPECT_EQ(chosen, (std::vector<int>{0, 1, kOwnProtocol}));
  // Without its protocols the library prices every call with its own terms: never faster.
  CollectiveLibrary simple_only = library;
  simple_only.protocols.clear();
  const Bytes small_call = Bytes{16} << 10;
  const PricedProgram& program = network.program(g, CollectiveAlgorithm::ring, CollectiveOp::all_gather, small_call, false);
  EXPECT_GT(program_time(program, simple_only, small_call, 0), program_time(program, library, small_call, 0));
}

// NCCL and RCCL run a ring's LL steps on fewer channels when a rank's chunk per step is below
// channels x bytes_per_channel: the phase's channels then carry channels / used times the bytes
// each. Tiny steps use one channel, large ones all; the price never falls, the flow model charges
// the same, and without the term nothing changes.
TEST(Protocols, SmallLlStepsRunOnFewerChannels) {
  Machine m = testing::small_machine(2, 4, 4, 2, 2, 2, 200.0, 200.0);  // 2 NICs per node: 2 ring channels
  CollectiveLibrary& library = m.collective_libraries.front();
  library.step_overlap = StepOverlap::pipelined;
  const Layout layout{1, 1, 1, 8};
  JobNetwork network(m, layout.devices());
  const PricedProgram& program = network.program(geometry(layout, CommGroup::z), CollectiveAlgorithm::ring,
                                                 CollectiveOp::all_gather, Bytes{1} << 20, false);
  ASSERT_EQ(program.phases.size(), 1u);
  const PricedPhase& phase = program.phases.front();
  ASSERT_EQ(phase.channels, 2);
  CollectiveLibrary ll = library;
  use_protocol_terms(ll, ProtocolTerms{"LL", 3_us, 0.05, Bytes{4} << 10});
  CollectiveLibrary every_channel = ll;
  every_channel.bytes_per_channel = 0;
  // A rank's chunk per step at `bytes`, over both channels.
  auto chunk = [&](Bytes bytes) { return phase.bytes_fraction * static_cast<double>(bytes) / phase.steps * 2; };
  double last = 2.0;
  for (Bytes bytes = 256; bytes <= (Bytes{1} << 24); bytes *= 2) {
    const double c = channel_concentration(phase, ll, bytes);
    EXPECT_EQ(c, chunk(bytes) < 8192.0 ? 2.0 : 1.0) << bytes;  // one channel below 2 x 4 KiB per step
    EXPECT_LE(c, last) << bytes;
    last = c;
    EXPECT_EQ(channel_concentration(phase, every_channel, bytes), 1.0);
    const Time fewer = program_time(program, ll, bytes, 0), all = program_time(program, every_channel, bytes, 0);
    if (c > 1.0) {
      EXPECT_GT(fewer, all) << bytes;
    } else {
      EXPECT_EQ(fewer, all) << bytes;
    }
  }
  EXPECT_EQ(channel_concentration(phase, ll, 256), 2.0);
  EXPECT_EQ(channel_concentration(phase, ll, Bytes{1} << 24), 1.0);
  // The flow model, the call alone, charges what the closed form does.
  library.protocols = {ProtocolTerms{"LL", 3_us, 0.05, Bytes{4} << 10}};
  for (const Bytes bytes : {Bytes{4} << 10, Bytes{64} << 10}) {
    JobNetwork flow_network(m, layout.devices());
    Simulation flow_kernel;
    FlowPricing flow(flow_network, layout, flow_kernel);
    const CollectiveCall call{CommGroup::z, CollectiveOp::all_gather, bytes};
    const int id = flow.issue(Time::zero(), call);
    EXPECT_EQ(flow.finish(id), collective_time(flow_network, layout, call)) << bytes;
  }
}

TEST(Pipelining, SerialLibrariesPayTheirWholeLatency) {
  CollectiveLibrary lib{"openmpi", 10_us, 2_us, 1.0};
  EXPECT_EQ(unhidden_latency(lib, 30_us, 40_us), 30_us);
  lib.step_overlap = StepOverlap::pipelined;
  EXPECT_EQ(unhidden_latency(lib, 30_us, 40_us), 10_us);  // sqrt(30^2 + 40^2) = 50 = 40 + 10
  EXPECT_EQ(unhidden_latency(lib, 30_us, Time::zero()), 30_us);
}

// Every byte a call's phases put on the network is delivered: the network's total equals the sum
// over phases of wire bytes x transfers, and two runs of one call sequence give the same times and
// the same trace hash.
TEST(FlowModel, ConservesBytesAndRepeatsExactly) {
  const Machine m = small(RoutingPolicy::adaptive);
  const Layout layout{3, 2, 2, 2};
  JobNetwork network(m, layout.devices());
  const std::vector<CollectiveCall> calls{{CommGroup::z, CollectiveOp::all_gather, 3_MiB},
                                          {CommGroup::data, CollectiveOp::all_reduce, 5_MiB},
                                          {CommGroup::x, CollectiveOp::all_reduce, 1_MiB},
                                          {CommGroup::y, CollectiveOp::reduce_scatter, 2_MiB},
                                          {CommGroup::data_z, CollectiveOp::all_reduce, 8},
                                          {CommGroup::z, CollectiveOp::reduce_scatter, 3_MiB}};
  auto run = [&] {
    Simulation p_kernel;
    FlowPricing p(network, layout, p_kernel);
    std::vector<Time> ends;
    std::vector<int> ids;
    Time now;
    for (const CollectiveCall& c : calls) {
      ids.push_back(p.issue(now, c));
      now += 3_us;
    }
    for (const int id : ids) ends.push_back(p.finish(id));
    return std::make_tuple(ends, p.flows().bytes_delivered(), p.flows().trace_hash());
  };
  const auto [ends, delivered, hash] = run();
  const auto [ends2, delivered2, hash2] = run();
  EXPECT_EQ(ends, ends2);
  EXPECT_EQ(hash, hash2);
  EXPECT_EQ(delivered, delivered2);
  const CollectiveLibrary& library = m.collective_libraries.front();
  double expected = 0;
  for (const CollectiveCall& c : calls) {
    const GroupGeometry g = geometry(layout, c.group);
    const CollectiveAlgorithm algorithm = choose_algorithm(network, library, g, c.op, c.bytes);
    for (const PricedPhase& phase : network.program(g, algorithm, c.op, c.bytes, false).phases) {
      const double progress = phase.bytes_fraction * static_cast<double>(c.bytes) / library.bandwidth_efficiency;
      expected += static_cast<double>(std::llround(progress * phase.transfer_weight));
    }
  }
  EXPECT_EQ(static_cast<double>(delivered), expected);
}

TEST(FlowModel, CallsOnOneCommunicatorRunInIssueOrder) {
  const Machine m = small(RoutingPolicy::minimal);
  const Layout layout{3, 2, 2, 2};
  JobNetwork network(m, layout.devices());
  Simulation p_kernel;
  FlowPricing p(network, layout, p_kernel);
  const CollectiveCall call{CommGroup::data, CollectiveOp::all_reduce, 4_MiB};
  const int first = p.issue(Time::zero(), call);
  const int second = p.issue(1_us, call);
  const Time alone = collective_time(network, layout, call);
  EXPECT_EQ(p.finish(first), alone);
  EXPECT_EQ(p.finish(second), alone + alone);
}

TEST(AlgorithmChoice, NcclAllReduceTakesTheTreeForTinyBuffersOnManyNodesAndTheRingForLargeOnes) {
  Machine m = small(RoutingPolicy::minimal);
  m.collective_libraries.front().name = "nccl";
  m.collective_libraries.front().step_latency = 20_us;
  const Layout layout{24, 1, 1, 1};  // 24 data members, one per node over three groups
  JobNetwork network(m, layout.devices());
  const GroupGeometry g = geometry(layout, CommGroup::data);
  const CollectiveLibrary& nccl = m.collective_libraries.front();
  EXPECT_EQ(choose_algorithm(network, nccl, g, CollectiveOp::all_reduce, 8), CollectiveAlgorithm::tree);
  EXPECT_EQ(choose_algorithm(network, nccl, g, CollectiveOp::all_reduce, 1_GiB), CollectiveAlgorithm::ring);
  EXPECT_EQ(choose_algorithm(network, nccl, g, CollectiveOp::all_gather, 8), CollectiveAlgorithm::ring);
}

TEST(CollectiveJob, TwoRunsGiveIdenticalReports) {
  using namespace ws::literals;
  Machine m = testing::small_machine(4, 4, 4, 2, 2, 1, 25.0, 25.0);
  m.network.routing = RoutingPolicy::adaptive;
  CollectiveJobSpec spec;
  spec.op = CollectiveOp::all_reduce;
  spec.bytes = 32_MiB;
  spec.layout = Layout{8, 2, 1, 1};
  spec.group = CommGroup::data;
  spec.placement = NodeAllocation::scattered;
  spec.seed = 3;
  const auto a = run_collective_job(m, spec), b = run_collective_job(m, spec);
  EXPECT_EQ(a.communicators, 2);
  EXPECT_EQ(a.members, 8);
  EXPECT_EQ(a.time, b.time);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (std::size_t i = 0; i < a.phases.size(); ++i) EXPECT_EQ(a.phases[i].valiant_share, b.phases[i].valiant_share);
  ASSERT_EQ(a.busiest.size(), b.busiest.size());
  for (std::size_t i = 0; i < a.busiest.size(); ++i) {
    EXPECT_EQ(a.busiest[i].link, b.busiest[i].link);
    EXPECT_EQ(a.busiest[i].bytes, b.busiest[i].bytes);
  }
}

// A machine written like SimGrid's uniform dragonfly (16 consecutive nodes on each router, one NIC,
// 25 GB/s links everywhere): a ring over one router's 16 nodes never leaves the switch, and takes
// the closed form's time for a ring that only the NICs limit, (p - 1)/p M / bw plus its steps'
// latencies, within 1 %. Striped (the default), the same ring crosses a local link at every hop.
TEST(NodeAttachment, ConsecutiveNodesOnOneSwitchKeepARingOffTheLocalLinks) {
  Machine m = testing::small_machine(2, 4, 64, 1, 1, 4, 200.0, 200.0);
  m.collective_libraries.front().name = "nccl";
  CollectiveJobSpec spec;
  spec.op = CollectiveOp::all_gather;
  spec.bytes = Bytes{1} << 30;
  spec.devices = 16;
  spec.algorithm = CollectiveAlgorithm::ring;
  spec.routing = RoutingPolicy::minimal;
  spec.top_links = 1000;
  auto local_bytes = [](const CollectiveJobReport& r) {
    double bytes = 0;
    for (const LinkUsage& l : r.busiest) bytes += l.kind == LinkKind::local ? l.bytes : 0.0;
    return bytes;
  };
  const CollectiveJobReport striped = run_collective_job(m, spec);
  m.network.nodes_per_switch = 16;
  const CollectiveJobReport blocked = run_collective_job(m, spec);
  EXPECT_GT(local_bytes(striped), 0.0);
  EXPECT_EQ(local_bytes(blocked), 0.0);
  // Closed form: 15 steps of M/16 at the NIC's 25 GB/s, each paying the library's step, the NICs'
  // latency both ways and two endpoint links and one switch.
  const CollectiveLibrary& lib = m.collective_libraries.front();
  const double p = 16, step_bytes = static_cast<double>(spec.bytes) / p;
  const double hop = m.node.nics.front().latency.seconds() * 2 + 2 * m.network.endpoint_link_latency.seconds() +
                     m.network.switch_latency.seconds();
  const double closed = lib.launch_latency.seconds() + (p - 1) * (lib.step_latency.seconds() + hop + step_bytes / 25e9);
  EXPECT_NEAR(blocked.time.seconds() / closed, 1.0, 0.01)
      << "blocked " << blocked.time.seconds() << " s, closed form " << closed << " s";
}

// The communicators the network prices for each group and stage are the ranks the engine splits
// (members share every coordinate but the group's, ordered by it), under both rank orders
// (stages outermost, and inside the data ranks: Megatron-LM's tp-pp-dp), and a stage transfer
// sends from every rank of one stage to its counterpart on the other.
TEST(JobNetwork, CommunicatorsAreTheEnginesGroupsUnderEitherRankOrder) {
  const Machine m = small(RoutingPolicy::minimal);
  for (const char* text : {"tp=2,pp=2,dp=3,mb=4", "tp=2,pp=2,dp=3,mb=4,order=tp-pp-dp", "tp=1,pp=3,dp=2,mb=3,order=tp-pp-dp",
                           "tp=4,pp=2,dp=2,mb=2,order=tp-pp-dp"}) {
    const Layout layout = *parse_layout(text);
    ASSERT_EQ(layout.order == RankOrder::stages_inside_data, std::string(text).find("order") != std::string::npos);
    JobNetwork network(m, layout.devices());
    for (int r = 0; r < layout.devices(); ++r) ASSERT_EQ(network.device_of_rank(r), r);
    for (const CommGroup group : {CommGroup::y, CommGroup::data, CommGroup::data_z, CommGroup::pipeline}) {
      const int stages = group == CommGroup::pipeline ? 1 : layout.pipeline;
      for (int stage = 0; stage < stages; ++stage) {
        std::vector<std::vector<int>> expected;
        for (int r = 0; r < layout.devices(); ++r) {
          const RankCoords c = coords_of(layout, r);
          if (group != CommGroup::pipeline && c.stage != stage) continue;
          const int position = group == CommGroup::y ? c.y : group == CommGroup::pipeline ? c.stage : c.data;
          if (position != 0) continue;
          std::vector<int> members;
          for (int k = 0; k < group_size(layout, group); ++k) {
            RankCoords member = c;
            (group == CommGroup::y ? member.y : group == CommGroup::pipeline ? member.stage : member.data) = k;
            members.push_back(rank_of(layout, member));
          }
          expected.push_back(members);
        }
        EXPECT_EQ(network.communicators(geometry(layout, group, stage)), expected)
            << text << " " << to_string(group) << " stage " << stage;
      }
    }
  }
  // Stage transfers: the data ranks' counterparts, wherever the order puts them; with the stages
  // inside the data ranks on 2-device nodes, tp=2 and pp=2 keep each replica's two stages on
  // neighbouring nodes, while the default order puts stage 1 a whole dp x tp ranks away.
  const Layout outer = *parse_layout("tp=2,pp=2,dp=3,mb=4"), inner = *parse_layout("tp=2,pp=2,dp=3,mb=4,order=tp-pp-dp");
  EXPECT_EQ(outer.stage_stride(), 6);
  EXPECT_EQ(inner.stage_stride(), 2);
  EXPECT_EQ(inner.data_stride(), 4);
  EXPECT_EQ(coords_of(inner, 2).stage, 1);
  EXPECT_EQ(coords_of(inner, 4).data, 1);
  for (const Layout& l : {outer, inner})
    for (int r = 0; r < l.devices(); ++r) EXPECT_EQ(rank_of(l, coords_of(l, r)), r) << to_string(l);
}

}  // namespace
}  // namespace ws
