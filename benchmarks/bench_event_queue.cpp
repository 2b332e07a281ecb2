// Event-queue throughput (issue 3 target: >= 10 M events/s on one core). Hold-model benchmark:
// a queue of N pending events; each iteration pops the earliest and pushes one at a random later
// time, the classic steady-state pattern of a discrete-event simulation.
// Run: build/benchmarks/bench_event_queue
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "base/random.hpp"

namespace {

// Pre-drawn delays (the benchmarks measure the queue, not the generator), and a queue holding
// `pending` events at the first of them.
std::vector<std::int64_t> fill(ws::EventQueue& q, std::uint64_t pending) {
  ws::RandomStream rng(1, ws::StreamId::test);
  std::vector<std::int64_t> delays(1 << 16);
  for (auto& d : delays) d = static_cast<std::int64_t>(rng.uniform_below(1000000));
  for (std::uint64_t i = 0; i < pending; ++i) {
    q.push(ws::Time::from_ps(delays[i & 0xFFFF]), {0, static_cast<std::uint32_t>(i), 0});
  }
  return delays;
}

// The hold model: pop the earliest, push one at a random later time. With kPeek, as the simulators
// drive it: pop, peek at the next pending event (the flow network asks when the next activation
// is), then schedule with delays shrunk by the queue's size, so that most new events land between
// the popped time and the peeked one, below the reference the peek moved up
// (EventQueue::lower_reference).
template <bool kPeek>
void hold(benchmark::State& state) {
  const auto pending = static_cast<std::uint64_t>(state.range(0));
  ws::EventQueue q;
  const std::vector<std::int64_t> delays = fill(q, pending);
  const auto shrink = kPeek ? static_cast<std::int64_t>(pending) : 1;
  std::size_t k = 0;
  for (auto _ : state) {
    const ws::Event e = q.pop();
    if constexpr (kPeek) benchmark::DoNotOptimize(q.top());
    q.push(e.time + ws::Time::from_ps(delays[k++ & 0xFFFF] / shrink), e.payload);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_EventQueueHold(benchmark::State& state) { hold<false>(state); }
BENCHMARK(BM_EventQueueHold)->Arg(64)->Arg(1024)->Arg(16384)->Arg(262144);

void BM_EventQueuePeekHold(benchmark::State& state) { hold<true>(state); }
BENCHMARK(BM_EventQueuePeekHold)->Arg(64)->Arg(1024)->Arg(16384)->Arg(262144);

}  // namespace
