// Lockstep flow groups per ring call (one per segment of steps), plus closed-form step latencies.
#include "sim/collectives/ring_coalesced.hpp"

#include <algorithm>

#include "sim/core/event_queue.hpp"

namespace ws {

namespace {

// Sum of the sizes of `count` consecutive chunks first, first + 1, ... (mod p) of `total` bytes
// split over p chunks, the first total % p one byte larger.
Bytes chunk_run_bytes(Bytes total, int p, int first, int count) {
  const auto P = static_cast<Bytes>(p);
  const Bytes base = total / P, extra = total % P;
  const auto n = static_cast<Bytes>(count);
  const auto s = static_cast<Bytes>(((first % p) + p) % p);
  const Bytes rest = n % P;
  auto below_extra = [&](Bytes lo, Bytes hi) {  // chunks in [lo, hi) with index < extra
    return hi <= lo ? Bytes{0} : std::min(hi, extra) > lo ? std::min(hi, extra) - lo : Bytes{0};
  };
  Bytes larger = (n / P) * extra + below_extra(s, std::min(s + rest, P));
  if (s + rest > P) larger += below_extra(0, s + rest - P);
  return n * base + larger;
}

// Bytes member i sends at ring steps [a, b): the chunk schedule of ring.cpp (reduce-scatter step k
// sends chunk i - k, all-gather step k chunk i + 1 - k, mod p), all-gather-only calls starting in
// the all-gather phase.
Bytes member_bytes(CollectiveOp op, Bytes total, int p, int i, int a, int b) {
  const int reduce_steps = op == CollectiveOp::all_gather ? 0 : p - 1;
  Bytes bytes = 0;
  if (a < std::min(b, reduce_steps)) {
    const int e = std::min(b, reduce_steps);
    bytes += chunk_run_bytes(total, p, i - e + 1, e - a);
  }
  if (b > reduce_steps) {
    const int a2 = std::max(a, reduce_steps) - reduce_steps, e2 = b - reduce_steps;
    bytes += chunk_run_bytes(total, p, i + 2 - e2, e2 - a2);
  }
  return bytes;
}

// Latency part of `steps` stepwise ring steps in lockstep: the latest over members i of the chain
// ending with i's send, (steps - 1) step latencies and the path latencies of the `steps`
// consecutive members up to i (cyclic).
Time latency_chain(std::span<const Time> path_latency, int steps, Time step_latency) {
  const auto p = static_cast<int>(path_latency.size());
  std::vector<Time> prefix(static_cast<std::size_t>(p) + 1);
  for (int i = 0; i < p; ++i) {
    prefix[static_cast<std::size_t>(i) + 1] = prefix[static_cast<std::size_t>(i)] + path_latency[static_cast<std::size_t>(i)];
  }
  const int laps = steps / p, rest = steps % p;
  Time worst;
  for (int i = 0; i < p; ++i) {
    const int hi = i + 1, lo = hi - rest;  // members i - rest + 1 .. i
    const Time window = lo >= 0 ? prefix[static_cast<std::size_t>(hi)] - prefix[static_cast<std::size_t>(lo)]
                                : prefix[static_cast<std::size_t>(hi)] + prefix[static_cast<std::size_t>(p)] -
                                      prefix[static_cast<std::size_t>(p + lo)];
    worst = max(worst, prefix[static_cast<std::size_t>(p)] * laps + window);
  }
  return worst + step_latency * (steps - 1);
}

}  // namespace

std::vector<CollectiveResult> run_ring_collectives_coalesced(FlowNetwork& network, std::span<const CollectiveCall> calls,
                                                             const CollectiveLibrary& library, RingCoalescing options) {
  std::vector<CollectiveResult> results(calls.size());
  // Per call, the segment in flight: latency still owed after its group completes (its chain minus
  // the longest member path, which the group already waited before carrying data).
  std::vector<Time> owed(calls.size());
  std::vector<int> segment(calls.size(), 0);
  std::vector<int> segments(calls.size(), 0);

  EventQueue starts;  // payload: id = call; a segment's group is started at the event time
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const CollectiveCall& call = calls[c];
    const int p = static_cast<int>(call.devices.size());
    results[c].start = call.start;
    results[c].end = call.start + library.launch_latency;
    if (p < 2) continue;
    segments[c] = std::clamp(options.segments, 1, ring_steps(call.op, p));
    starts.push(call.start + library.launch_latency + library.step_latency, {0, static_cast<std::uint32_t>(c), 0});
  }

  std::vector<FlowRequest> members;
  std::vector<Time> path_latency, member_latency;
  std::vector<CompletedFlow> done;
  for (;;) {
    const Time tn = network.next_event_time();
    const Time ts = starts.empty() ? Time::max() : starts.top().time;
    if (tn == Time::max() && ts == Time::max()) break;
    if (tn <= ts) {
      done.clear();
      network.advance(tn, done);
      for (const CompletedFlow& f : done) {
        const auto c = static_cast<std::size_t>(f.tag);
        const Time ready = f.end + owed[c];
        if (++segment[c] == segments[c]) {
          results[c].end = ready;
        } else {
          starts.push(ready + library.step_latency, {0, static_cast<std::uint32_t>(c), 0});
        }
      }
      continue;
    }
    const Event e = starts.pop();
    const std::size_t c = e.payload.id;
    const CollectiveCall& call = calls[c];
    const int p = static_cast<int>(call.devices.size());
    const int steps = ring_steps(call.op, p), s = segment[c], n = segments[c];
    const int first = static_cast<int>(static_cast<long long>(s) * steps / n);
    const int last = static_cast<int>(static_cast<long long>(s + 1) * steps / n);
    const int q = std::max(options.paths_per_member, 1);
    members.clear();
    for (int i = 0; i < p; ++i) {
      const Bytes bytes = member_bytes(call.op, call.bytes, p, i, first, last);
      for (int k = 0; k < q; ++k) {
        const auto Q = static_cast<Bytes>(q);
        members.push_back({call.devices[static_cast<std::size_t>(i)], call.devices[static_cast<std::size_t>((i + 1) % p)],
                           bytes / Q + (static_cast<Bytes>(k) < bytes % Q ? 1 : 0)});
      }
    }
    path_latency.assign(members.size(), Time::zero());
    network.start_flow_group(e.time, members, c, path_latency);
    member_latency.assign(static_cast<std::size_t>(p), Time::zero());
    for (std::size_t r = 0; r < members.size(); ++r) {
      Time& m = member_latency[r / static_cast<std::size_t>(q)];
      m = max(m, path_latency[r]);
    }
    owed[c] = latency_chain(member_latency, last - first, library.step_latency) -
              *std::max_element(path_latency.begin(), path_latency.end());
    results[c].flows += members.size();
  }
  return results;
}

}  // namespace ws
