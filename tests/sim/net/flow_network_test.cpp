// Properties of max-min flow sharing: closed forms, conservation, isolation, determinism.
#include "sim/net/flow_network.hpp"
#include "sim/net/sprayed_messages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "base/random.hpp"
#include "tests/sim/net/test_machine.hpp"

namespace ws {
namespace {

using namespace ws::literals;

// Runs the network until idle, collecting every completed flow.
std::vector<CompletedFlow> drain(FlowNetwork& net) {
  std::vector<CompletedFlow> done;
  for (Time t = net.next_event_time(); t != Time::max(); t = net.next_event_time()) net.advance(t, done);
  return done;
}

TEST(FlowNetwork, SingleFlowTakesLatencyPlusSizeOverBandwidth) {
  const Machine m = testing::small_machine(2, 2, 2, 1, 1, 1);
  const Topology t = build_topology(m, 4);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  const Bytes size = 1_MiB;
  const Time latency = messages.send(Time::zero(), 0, 3, size, 42).latency;  // across groups
  // NIC (25 GB/s) is the bottleneck: fabric links are 200 GB/s.
  const Time expected = latency + transfer_time(static_cast<double>(size), 25_GBps);
  const auto done = drain(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].end, expected);
  EXPECT_EQ(done[0].tag, 42u);
  // dev->NIC, NIC->switch, local, global, local?, switch->NIC, NIC->dev: NIC latency once,
  // endpoint twice, global once, a switch latency per switch entered.
  EXPECT_GE(latency, 1000_ns + 2 * 50_ns + 500_ns + 2 * 350_ns);
}

TEST(FlowNetwork, FlowsOnOneLinkSplitItEvenlyAndConserveBytes) {
  const Machine m = testing::small_machine(1, 2, 1, 2, 1, 1);
  const Topology t = build_topology(m, 1);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  const int n = 5;
  const Bytes size = 3_MiB;
  std::vector<int> flows;
  for (int i = 0; i < n; ++i) flows.push_back(messages.send(Time::zero(), 0, 1, size, static_cast<std::uint64_t>(i)).flow);
  const Time latency = messages.route(0, 1).latency;
  std::vector<CompletedFlow> done;
  net.advance(net.next_event_time(), done);  // all activate together
  for (const int f : flows) EXPECT_DOUBLE_EQ(net.rate_bytes_per_s(f), 100e9 / n);
  for (Time tt = net.next_event_time(); tt != Time::max(); tt = net.next_event_time()) net.advance(tt, done);
  ASSERT_EQ(done.size(), static_cast<std::size_t>(n));
  const Time expected = latency + transfer_time(static_cast<double>(size), 100_GBps / n);
  for (const auto& d : done) EXPECT_EQ(d.end, expected);
  EXPECT_EQ(net.bytes_delivered(), n * size);
  const int link = t.intra_node_link(0, 0, 1);
  EXPECT_DOUBLE_EQ(net.link_bytes_delivered(link), static_cast<double>(n * size));
}

TEST(FlowNetwork, ShortFlowLeavingSpeedsUpTheOthersExactly) {
  // Two flows share a 100 GB/s link; the 1 MiB one finishes, then the 3 MiB one gets all of it.
  const Machine m = testing::small_machine(1, 2, 1, 2, 1, 1);
  const Topology t = build_topology(m, 1);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  messages.send(Time::zero(), 0, 1, 1_MiB, 1);
  const Time latency = messages.send(Time::zero(), 0, 1, 3_MiB, 2).latency;
  const auto done = drain(net);
  ASSERT_EQ(done.size(), 2u);
  const Time first = latency + transfer_time(static_cast<double>(1_MiB), 50_GBps);
  EXPECT_EQ(done[0].end, first);
  EXPECT_NEAR(static_cast<double>(done[1].end.ps()),
              static_cast<double>((first + transfer_time(static_cast<double>(2_MiB), 100_GBps)).ps()), 2.0);
}

TEST(FlowNetwork, OversubscribedGlobalLinkSlowsExactlyTheFlowsCrossingIt) {
  // Two groups joined by one 25 GB/s global link; 4 flows cross it, 4 stay inside group 0.
  const Machine m = testing::small_machine(2, 4, 8, 1, 1, 1, 200.0, 25.0);
  const Topology t = build_topology(m, 16);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  const Bytes size = 4_MiB;
  std::map<std::uint64_t, Time> latency;
  for (int i = 0; i < 4; ++i) {
    latency[static_cast<std::uint64_t>(i)] =
        messages.send(Time::zero(), i, 8 + i, size, static_cast<std::uint64_t>(i)).latency;  // crossing
  }
  for (int i = 4; i < 8; ++i) {
    latency[static_cast<std::uint64_t>(i)] =
        messages.send(Time::zero(), i, 4 + (i - 3) % 4, size, static_cast<std::uint64_t>(i)).latency;  // local
  }
  const auto done = drain(net);
  ASSERT_EQ(done.size(), 8u);
  for (const auto& d : done) {
    const bool crossing = d.tag < 4;
    const Bandwidth share = crossing ? 25_GBps / 4 : 25_GBps;
    // Crossing flows activate at slightly different times (paths differ); allow that skew only.
    const Time expected = latency[d.tag] + transfer_time(static_cast<double>(size), share);
    if (crossing) {
      EXPECT_NEAR(d.end.us(), expected.us(), 0.01 * expected.us()) << d.tag;
    } else {
      EXPECT_EQ(d.end, expected) << d.tag;
    }
  }
  EXPECT_DOUBLE_EQ(net.link_bytes_delivered(t.global_link(0, 1, 0)), static_cast<double>(4 * size));
  EXPECT_DOUBLE_EQ(net.link_bytes_delivered(t.global_link(1, 0, 0)), 0.0);
}

// A message's Valiant share in the random traffic: minimal, mixed or all Valiant, so shapes of one
// link per hop and shapes sprayed over many paths meet on the links.
double random_valiant_share(RandomStream& rng) { return 0.5 * static_cast<double>(rng.uniform_below(3)); }

// Random traffic, minimal and sprayed over Valiant paths: the trace hash and every completion time
// repeat exactly.
std::pair<std::uint64_t, std::vector<std::int64_t>> random_traffic(std::uint64_t seed) {
  const Machine m = testing::small_machine(4, 4, 4, 2, 2, 2, 50.0, 25.0);
  const Topology t = build_topology(m, 16);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  RandomStream rng(seed, StreamId::test);
  std::vector<CompletedFlow> done;
  Time now;
  for (int i = 0; i < 400; ++i) {
    now += Time::from_ns(rng.uniform(0.0, 2000.0));
    while (net.next_event_time() <= now) net.advance(net.next_event_time(), done);
    const auto a = static_cast<int>(rng.uniform_below(32));
    auto b = static_cast<int>(rng.uniform_below(31));
    if (b >= a) ++b;
    messages.send(now, a, b, 1 + rng.uniform_below(1_MiB), static_cast<std::uint64_t>(i), random_valiant_share(rng));
  }
  for (Time tt = net.next_event_time(); tt != Time::max(); tt = net.next_event_time()) net.advance(tt, done);
  std::vector<std::int64_t> ends;
  Bytes sent = 0;
  for (const auto& d : done) {
    ends.push_back(d.end.ps());
    sent += d.bytes;
  }
  EXPECT_EQ(done.size(), 400u);
  EXPECT_EQ(net.bytes_delivered(), sent);
  return {net.trace_hash(), ends};
}

// After every solve the shares are weighted max-min fair: no link over capacity (a flow puts its
// rate x its weight on each link of its shape), and every active flow has a saturated link on which
// no flow gets a higher rate (its bottleneck). Random overlapping traffic, minimal and sprayed over
// Valiant paths, exercises the solve that stops at unsaturated links and its fallback.
TEST(FlowNetwork, SharesAreMaxMinFairAfterEverySolve) {
  const Machine m = testing::small_machine(4, 4, 4, 2, 2, 2, 50.0, 25.0);
  const Topology t = build_topology(m, 16);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  std::map<int, int> shape_of;  // live flow id -> its shape
  RandomStream rng(5, StreamId::test);
  std::map<std::uint64_t, int> live;  // tag -> flow id, started and not completed
  std::map<std::uint64_t, Time> active_from;
  std::vector<CompletedFlow> done;
  auto check = [&](Time now) {
    std::vector<double> used(t.links.size(), 0.0), top(t.links.size(), 0.0);
    std::vector<int> on(t.links.size(), 0);
    std::vector<int> active;
    for (const auto& [tag, f] : live) {
      if (active_from[tag] > now) continue;  // still in its latency phase
      active.push_back(f);
      for (const LinkShare& s : net.shape(shape_of[f])) {
        const auto li = static_cast<std::size_t>(s.link);
        used[li] += net.rate_bytes_per_s(f) * s.weight;
        top[li] = std::max(top[li], net.rate_bytes_per_s(f));
        ++on[li];
      }
    }
    for (std::size_t l = 0; l < t.links.size(); ++l) {
      ASSERT_LE(used[l], t.links[l].bandwidth.bytes_per_s() * (1 + 1e-9)) << l;
    }
    for (const int f : active) {
      bool bottleneck = false;
      for (const LinkShare& s : net.shape(shape_of[f])) {
        const auto li = static_cast<std::size_t>(s.link);
        bottleneck |= used[li] >= t.links[li].bandwidth.bytes_per_s() * (1 - 1e-9) &&
                      net.rate_bytes_per_s(f) >= top[li] * (1 - 1e-9);
      }
      ASSERT_TRUE(bottleneck) << "flow " << f << " at " << now.ps();
    }
  };
  Time now;
  for (int i = 0; i < 300; ++i) {
    now += Time::from_ns(rng.uniform(0.0, 3000.0));
    for (Time tt = net.next_event_time(); tt <= now; tt = net.next_event_time()) {
      done.clear();
      net.advance(tt, done);
      for (const auto& d : done) live.erase(d.tag);
      check(tt);
    }
    const auto a = static_cast<int>(rng.uniform_below(32));
    auto b = static_cast<int>(rng.uniform_below(31));
    if (b >= a) ++b;
    const auto tag = static_cast<std::uint64_t>(i);
    const double valiant = random_valiant_share(rng);
    const SentMessage sent = messages.send(now, a, b, 1 + rng.uniform_below(2_MiB), tag, valiant);
    live[tag] = sent.flow;
    shape_of[sent.flow] = messages.route(a, b, valiant).shape;
    active_from[tag] = now + sent.latency;
  }
  for (Time tt = net.next_event_time(); tt != Time::max(); tt = net.next_event_time()) {
    done.clear();
    net.advance(tt, done);
    for (const auto& d : done) live.erase(d.tag);
    check(tt);
  }
  EXPECT_TRUE(live.empty());
}

TEST(FlowNetwork, SameInputsGiveIdenticalTrace) {
  const auto a = random_traffic(17);
  const auto b = random_traffic(17);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, random_traffic(18).first);
}

TEST(FlowNetwork, ShapedFlowCountsItsWeightAndConservesBytes) {
  // A shaped flow of weight 2 (two coupled flows) and one plain flow over the same 100 GB/s link:
  // three shares, each moving at a third of the link.
  const Machine m = testing::small_machine(1, 2, 1, 2, 1, 1);
  const Topology t = build_topology(m, 1);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  const Bytes size = 3_MiB;
  const int link = t.intra_node_link(0, 0, 1);
  const int shape = net.add_shape({{link, 2.0}});
  const SentMessage plain = messages.send(Time::zero(), 0, 1, size, 8);
  const int f = plain.flow;
  const Time latency = plain.latency;
  const int g = net.start_shaped_flow(Time::zero(), shape, latency, static_cast<double>(size), 2 * size, 7);
  std::vector<CompletedFlow> done;
  net.advance(net.next_event_time(), done);
  EXPECT_DOUBLE_EQ(net.rate_bytes_per_s(g), 100e9 / 3);
  EXPECT_DOUBLE_EQ(net.rate_bytes_per_s(f), 100e9 / 3);
  for (Time tt = net.next_event_time(); tt != Time::max(); tt = net.next_event_time()) net.advance(tt, done);
  ASSERT_EQ(done.size(), 2u);
  const Time expected = latency + transfer_time(static_cast<double>(size), 100_GBps / 3);
  for (const auto& d : done) EXPECT_EQ(d.end, expected);
  EXPECT_EQ(done[0].bytes + done[1].bytes, 3 * size);
  EXPECT_EQ(net.bytes_delivered(), 3 * size);
  EXPECT_DOUBLE_EQ(net.link_bytes_delivered(link), static_cast<double>(3 * size));
  EXPECT_EQ(net.active_flows(), 0u);
}

TEST(FlowNetwork, ShapedFlowMovesAtItsMostLoadedLinksShare) {
  // A shape over both NICs' paths (0 -> 1 and 1 -> 0) and a plain flow on the first NIC: the shape
  // gets half a NIC until the plain flow leaves, then a whole one.
  const Machine m = testing::small_machine(1, 2, 2, 1, 1, 1);
  const Topology t = build_topology(m, 2);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  const SentMessage plain = messages.send(Time::zero(), 0, 1, 1_MiB, 2);
  const int f = plain.flow;
  const Time latency = plain.latency;
  std::vector<LinkShare> links = net.shape(messages.route(0, 1).shape);
  for (const LinkShare& l : net.shape(messages.route(1, 0).shape)) links.push_back(l);
  std::sort(links.begin(), links.end(), [](const LinkShare& a, const LinkShare& b) { return a.link < b.link; });
  const int g = net.start_shaped_flow(Time::zero(), net.add_shape(links), latency, 4.0 * (1 << 20), 8_MiB, 1);
  std::vector<CompletedFlow> done;
  net.advance(net.next_event_time(), done);
  EXPECT_DOUBLE_EQ(net.rate_bytes_per_s(g), 12.5e9);
  EXPECT_DOUBLE_EQ(net.rate_bytes_per_s(f), 12.5e9);
  for (Time tt = net.next_event_time(); tt != Time::max(); tt = net.next_event_time()) net.advance(tt, done);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].tag, 2u);
  const Time plain_end = done[0].end;
  EXPECT_EQ(plain_end, latency + transfer_time(static_cast<double>(1_MiB), 12.5_GBps));
  const double sent_by_then = 12.5e9 * (plain_end - latency).seconds();
  EXPECT_NEAR(done[1].end.us(), (plain_end + transfer_time(static_cast<double>(4_MiB) - sent_by_then, 25_GBps)).us(), 1e-3);
  EXPECT_EQ(net.bytes_delivered(), 9_MiB);
}

// Shaped flows started in a repeating pattern: with memoization the rates of a repeated set of
// active shapes come from the memo, and every completion time is what the solver gives.
std::vector<std::int64_t> repeated_pattern(bool memoize, std::uint64_t* hits) {
  const Machine m = testing::small_machine(2, 2, 2, 2, 2, 1, 50.0, 25.0);
  const Topology t = build_topology(m, 4);
  FlowNetwork routes(t);  // where the message routes come from: a network of its own, no flows
  SprayedMessages messages(routes);
  FlowNetwork net(t);
  net.set_memoization(memoize);
  std::vector<int> shapes;
  for (const auto& [a, b] : {std::pair{0, 4}, std::pair{1, 6}, std::pair{2, 3}}) {
    std::vector<LinkShare> links = routes.shape(messages.route(a, b).shape);
    for (LinkShare& l : links) l.weight *= 1.0 + a;
    shapes.push_back(net.add_shape(links));
  }
  std::vector<CompletedFlow> done;
  Time now;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 3; ++i) {
      net.start_shaped_flow(now + Time::from_ns(100.0 * i), shapes[static_cast<std::size_t>(i)], 1_us,
                            1e6 * (1 + i), 1'000'000, static_cast<std::uint64_t>(round * 3 + i));
    }
    for (Time tt = net.next_event_time(); tt != Time::max(); tt = net.next_event_time()) net.advance(tt, done);
    now = done.back().end;
  }
  *hits = net.stats().memo_hits;
  std::vector<std::int64_t> ends;
  for (const auto& d : done) ends.push_back(d.end.ps() - d.start.ps());
  return ends;
}

TEST(FlowNetwork, MemoizedRatesRepeatTheSolvedTimesExactly) {
  std::uint64_t hits_on = 0, hits_off = 0;
  const auto with_memo = repeated_pattern(true, &hits_on);
  const auto without = repeated_pattern(false, &hits_off);
  EXPECT_EQ(with_memo, without);
  EXPECT_GT(hits_on, 0u);
  EXPECT_EQ(hits_off, 0u);
  // Every round repeats the first one exactly.
  for (std::size_t i = 3; i < with_memo.size(); ++i) EXPECT_EQ(with_memo[i], with_memo[i % 3]) << i;
}

TEST(FlowNetwork, ZeroByteMessageTakesOnlyTheLatency) {
  const Machine m = testing::small_machine(1, 2, 2, 1, 1, 1);
  const Topology t = build_topology(m, 2);
  FlowNetwork net(t);
  SprayedMessages messages(net);
  const Time latency = messages.send(5_us, 0, 1, 0, 7).latency;
  const auto done = drain(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].end, 5_us + latency);
}

}  // namespace
}  // namespace ws
