// One lockstep flow group per ring call, plus closed-form step latencies.
#include "sim/collectives/ring_coalesced.hpp"

#include <algorithm>
#include <numeric>

namespace ws {

namespace {

// Bytes member i sends over all its steps. Chunk c has total / p bytes, one more if c < total % p.
// Reduce-scatter sends every chunk but (i + 1), all-gather every chunk but (i + 2) (mod p): the
// chunk schedule of ring.cpp.
Bytes member_bytes(CollectiveOp op, Bytes total, int p, int i) {
  const auto chunk = [&](int c) {
    c %= p;
    return total / static_cast<Bytes>(p) + (static_cast<Bytes>(c) < total % static_cast<Bytes>(p) ? 1 : 0);
  };
  switch (op) {
    case CollectiveOp::reduce_scatter: return total - chunk(i + 1);
    case CollectiveOp::all_gather: return total - chunk(i + 2);
    case CollectiveOp::all_reduce: return 2 * total - chunk(i + 1) - chunk(i + 2);
  }
  return 0;
}

// Latency part of the stepwise ring in lockstep: the latest over members i of the chain ending
// with i's last send, (steps - 1) step latencies and the path latencies of the `steps` consecutive
// members up to i (cyclic).
Time latency_chain(std::span<const Time> path_latency, int steps, Time step_latency) {
  const auto p = static_cast<int>(path_latency.size());
  std::vector<Time> prefix(static_cast<std::size_t>(p) + 1);
  for (int i = 0; i < p; ++i) {
    prefix[static_cast<std::size_t>(i) + 1] = prefix[static_cast<std::size_t>(i)] + path_latency[static_cast<std::size_t>(i)];
  }
  const int laps = steps / p, rest = steps % p;
  Time worst;
  for (int i = 0; i < p; ++i) {
    // Members i - rest + 1 .. i.
    const int hi = i + 1, lo = hi - rest;
    const Time window = lo >= 0 ? prefix[static_cast<std::size_t>(hi)] - prefix[static_cast<std::size_t>(lo)]
                                : prefix[static_cast<std::size_t>(hi)] + prefix[static_cast<std::size_t>(p)] -
                                      prefix[static_cast<std::size_t>(p + lo)];
    worst = max(worst, prefix[static_cast<std::size_t>(p)] * laps + window);
  }
  return worst + step_latency * (steps - 1);
}

}  // namespace

std::vector<CollectiveResult> run_ring_collectives_coalesced(FlowNetwork& network, std::span<const CollectiveCall> calls,
                                                             const CollectiveLibrary& library) {
  std::vector<CollectiveResult> results(calls.size());
  std::vector<Time> longest(calls.size());  // the group's activation delay (its longest member path)
  std::vector<Time> chain(calls.size());

  std::vector<std::size_t> order(calls.size());  // calls by start time, so groups start in time order
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return calls[a].start < calls[b].start; });

  std::vector<CompletedFlow> done;
  auto run_until = [&](Time t) {  // network events strictly before t
    for (Time tn = network.next_event_time(); tn < t; tn = network.next_event_time()) {
      done.clear();
      network.advance(tn, done);
      for (const CompletedFlow& f : done) {
        const auto c = static_cast<std::size_t>(f.tag);
        results[c].end = f.end - longest[c] + chain[c];
      }
    }
  };

  std::vector<FlowRequest> members;
  std::vector<Time> path_latency;
  for (const std::size_t c : order) {
    const CollectiveCall& call = calls[c];
    const int p = static_cast<int>(call.devices.size());
    results[c].start = call.start;
    results[c].end = call.start + library.launch_latency;
    if (p < 2) continue;
    const int steps = ring_steps(call.op, p);
    const Time send = call.start + library.launch_latency + library.step_latency;
    run_until(send);
    members.clear();
    for (int i = 0; i < p; ++i) {
      members.push_back({call.devices[static_cast<std::size_t>(i)], call.devices[static_cast<std::size_t>((i + 1) % p)],
                         member_bytes(call.op, call.bytes, p, i)});
    }
    path_latency.assign(members.size(), Time::zero());
    network.start_flow_group(send, members, c, path_latency);
    longest[c] = *std::max_element(path_latency.begin(), path_latency.end());
    chain[c] = latency_chain(path_latency, steps, library.step_latency);
    results[c].flows = static_cast<std::uint64_t>(p);
  }
  run_until(Time::max());
  return results;
}

}  // namespace ws
