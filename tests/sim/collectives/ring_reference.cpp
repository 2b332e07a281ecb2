// The ring schedule driven by its own event queue, interleaved with the network's events.
#include "tests/sim/collectives/ring_reference.hpp"

#include "sim/collectives/ring_schedule.hpp"

#include <stdexcept>

#include "sim/core/event_queue.hpp"
#include "sim/net/sprayed_messages.hpp"

namespace ws {

namespace {

// Flow tag layout: call (20 bits) | member (22 bits) | step (22 bits).
constexpr int kMemberBits = 22;
constexpr int kStepBits = 22;
constexpr std::uint64_t kMask22 = (1ULL << 22) - 1;

std::uint64_t make_tag(std::size_t call, int member, int step) {
  return (static_cast<std::uint64_t>(call) << (kMemberBits + kStepBits)) |
         (static_cast<std::uint64_t>(member) << kStepBits) | static_cast<std::uint64_t>(step);
}

// Chunk moved at `step` by `member`: reduce-scatter phase sends chunk (i - k) mod p, all-gather
// phase chunk (i + 1 - k) mod p; only its size matters to the network.
Bytes chunk_bytes(Bytes total, int p, int member, int step, int steps_reduce) {
  const int k = step < steps_reduce ? step : step - steps_reduce;
  const int offset = step < steps_reduce ? 0 : 1;
  const int chunk = ((member + offset - k) % p + p) % p;
  const Bytes base = total / static_cast<Bytes>(p), extra = total % static_cast<Bytes>(p);
  return base + (static_cast<Bytes>(chunk) < extra ? 1 : 0);
}

}  // namespace

std::vector<CollectiveResult> run_ring_collectives(FlowNetwork& network, std::span<const RingCall> calls,
                                                   const CollectiveLibrary& library, double valiant_share) {
  if (calls.size() >= (1u << 20)) throw std::invalid_argument("run_ring_collectives: too many calls");
  std::vector<CollectiveResult> results(calls.size());
  std::vector<std::size_t> first_member(calls.size() + 1, 0);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const auto p = calls[c].devices.size();
    if (p == 0 || p > kMask22 || static_cast<std::uint64_t>(ring_steps(calls[c].op, static_cast<int>(p))) > kMask22) {
      throw std::invalid_argument("run_ring_collectives: communicator size out of range");
    }
    first_member[c + 1] = first_member[c] + p;
  }
  std::vector<int> received(first_member.back(), 0);  // steps received per member
  std::vector<int> members_left(calls.size(), 0);

  SprayedMessages messages(network);
  EventQueue sends;  // payload: id = call, data = member << 32 | step
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const RingCall& call = calls[c];
    const int p = static_cast<int>(call.devices.size());
    results[c].start = call.start;
    results[c].end = call.start + library.launch_latency;
    if (ring_steps(call.op, p) == 0) continue;
    members_left[c] = p;
    for (int i = 0; i < p; ++i) {
      sends.push(call.start + library.launch_latency + library.step_latency,
                 {0, static_cast<std::uint32_t>(c), static_cast<std::uint64_t>(i) << 32});
    }
  }

  std::vector<CompletedFlow> done;
  for (;;) {
    const Time tn = network.next_event_time();
    const Time ts = sends.empty() ? Time::max() : sends.top().time;
    if (tn == Time::max() && ts == Time::max()) break;
    // Equal times: the network's completions are handled before sends that were due at that time.
    if (tn <= ts) {
      done.clear();
      network.advance(tn, done);
      for (const CompletedFlow& f : done) {
        const auto c = static_cast<std::size_t>(f.tag >> (kMemberBits + kStepBits));
        const auto sender = static_cast<int>((f.tag >> kStepBits) & kMask22);
        const auto step = static_cast<int>(f.tag & kMask22);
        const RingCall& call = calls[c];
        const int p = static_cast<int>(call.devices.size());
        const int receiver = (sender + 1) % p;
        // Step k + 1 forwards the chunk received at step k, so it waits for that receive only; with
        // traffic on Valiant paths receives of one member may complete out of step order.
        int& got = received[first_member[c] + static_cast<std::size_t>(receiver)];
        ++got;
        if (step + 1 < ring_steps(call.op, p)) {
          sends.push(f.end + library.step_latency,
                     {0, static_cast<std::uint32_t>(c),
                      (static_cast<std::uint64_t>(receiver) << 32) | static_cast<std::uint64_t>(step + 1)});
        }
        if (got == ring_steps(call.op, p) && --members_left[c] == 0) {
          results[c].end = f.end;
        }
      }
    } else {
      const Event e = sends.pop();
      const std::size_t c = e.payload.id;
      const RingCall& call = calls[c];
      const int p = static_cast<int>(call.devices.size());
      const auto member = static_cast<int>(e.payload.data >> 32);
      const auto step = static_cast<int>(e.payload.data & 0xFFFFFFFFu);
      const int steps_reduce = call.op == CollectiveOp::all_gather ? 0 : p - 1;
      const Bytes bytes = call.op == CollectiveOp::all_gather
                              ? chunk_bytes(call.bytes, p, member, step + (p - 1), p - 1)
                              : chunk_bytes(call.bytes, p, member, step, steps_reduce);
      messages.send(e.time, call.devices[static_cast<std::size_t>(member)],
                    call.devices[static_cast<std::size_t>((member + 1) % p)], bytes, make_tag(c, member, step),
                    valiant_share);
      ++results[c].flows;
    }
  }
  return results;
}

}  // namespace ws
