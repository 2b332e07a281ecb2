// Properties of the event queue: (time, insertion) order, FIFO ties, determinism.
#include "sim/core/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/random.hpp"

namespace ws {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return splitmix64(h ^ v); }

TEST(EventQueue, PopsInTimeOrder) {
  EventQueue q;
  RandomStream rng(7, StreamId::test);
  std::vector<std::int64_t> times;
  for (int i = 0; i < 10000; ++i) {
    const auto t = static_cast<std::int64_t>(rng.uniform_below(1000000));
    times.push_back(t);
    q.push(Time::from_ps(t), {0, static_cast<std::uint32_t>(i), 0});
  }
  std::sort(times.begin(), times.end());
  for (const std::int64_t t : times) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.pop().time.ps(), t);
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, EqualTimesPopFirstInFirstOut) {
  EventQueue q;
  RandomStream rng(11, StreamId::test);
  for (std::uint32_t i = 0; i < 5000; ++i) {
    q.push(Time::from_ps(static_cast<std::int64_t>(rng.uniform_below(10))), {1, i, 0});
  }
  std::vector<std::uint32_t> last_id(10, 0);
  std::vector<bool> seen(10, false);
  std::int64_t last_time = -1;
  while (!q.empty()) {
    const Event e = q.pop();
    const auto slot = static_cast<std::size_t>(e.time.ps());
    if (seen[slot]) {
      EXPECT_GT(e.payload.id, last_id[slot]);
    }
    seen[slot] = true;
    last_id[slot] = e.payload.id;
    EXPECT_GE(e.time.ps(), last_time);
    last_time = e.time.ps();
  }
}

// A small self-feeding simulation: each popped event schedules up to two more at random delays.
std::uint64_t run_scenario(std::uint64_t seed) {
  EventQueue q;
  RandomStream rng(seed, StreamId::test);
  for (std::uint32_t i = 0; i < 64; ++i) q.push(Time::from_ps(0), {0, i, 0});
  std::uint64_t hash = 0;
  int popped = 0;
  while (!q.empty() && popped < 200000) {
    const Event e = q.pop();
    ++popped;
    hash = mix(hash, static_cast<std::uint64_t>(e.time.ps()));
    hash = mix(hash, e.payload.id);
    if (q.size() < 5000) {
      const auto children = rng.uniform_below(3);
      for (std::uint64_t c = 0; c < children; ++c) {
        q.push(e.time + Time::from_ps(static_cast<std::int64_t>(rng.uniform_below(100))),
               {0, static_cast<std::uint32_t>(rng.uniform_below(1u << 20)), 0});
      }
    }
  }
  return hash;
}

TEST(EventQueue, SameSeedSamePoppedSequence) {
  EXPECT_EQ(run_scenario(42), run_scenario(42));
  EXPECT_NE(run_scenario(42), run_scenario(43));
}

TEST(EventQueue, ClearEmptiesAndRestartsTheCount) {
  EventQueue q;
  q.push(Time::from_ps(5), {});
  q.push(Time::from_ps(3), {});
  EXPECT_EQ(q.pushed(), 2u);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pushed(), 0u);
  q.push(Time::from_ps(5), {0, 7, 0});
  EXPECT_EQ(q.pushed(), 1u);
  EXPECT_EQ(q.pop().payload.id, 7u);
}

// Interleaved pushes and pops, some pushes earlier than the last popped time and some at negative
// times, against a reference that sorts by (time, insertion): the same events in the same order.
TEST(EventQueue, MatchesASortedReferenceUnderInterleavedAndOutOfOrderPushes) {
  EventQueue q;
  RandomStream rng(5, StreamId::test);
  std::vector<std::pair<std::int64_t, std::uint64_t>> pending;  // (time, sequence)
  std::uint64_t sequence = 0;
  std::int64_t now = 0;
  for (int i = 0; i < 60000; ++i) {
    const auto r = rng.uniform_below(100);
    if (r < 55 || pending.empty()) {
      // Mostly later than now; 2 % before it (and below zero), as a non-DES caller might push.
      const auto offset = static_cast<std::int64_t>(rng.uniform_below(1u << 24));
      const std::int64_t t = r < 2 ? now - offset - 1 : now + (r < 20 ? 0 : offset);
      q.push(Time::from_ps(t), {0, static_cast<std::uint32_t>(sequence), 0});
      pending.emplace_back(t, sequence++);
    } else {
      const auto first = std::min_element(pending.begin(), pending.end());
      ASSERT_EQ(q.top().time.ps(), first->first);
      const Event e = q.pop();
      EXPECT_EQ(e.time.ps(), first->first);
      EXPECT_EQ(e.payload.id, first->second);  // pushed with its insertion number
      now = e.time.ps();
      pending.erase(first);
    }
    ASSERT_EQ(q.size(), pending.size());
  }
}

// The discrete-event pattern: pop the event at `now`, peek at the next pending one (top() moves the
// queue's reference up to its time), then schedule events between the two, at `now`, and later. The
// pops must still follow (time, insertion) exactly, ties included.
TEST(EventQueue, PushesBetweenThePoppedAndThePeekedTimeKeepTheOrder) {
  EventQueue q;
  RandomStream rng(11, StreamId::test);
  std::vector<std::pair<std::int64_t, std::uint64_t>> pending;  // (time, sequence)
  std::uint64_t sequence = 0;
  const auto push = [&](std::int64_t t) {
    q.push(Time::from_ps(t), {0, static_cast<std::uint32_t>(sequence), 0});
    pending.emplace_back(t, sequence++);
  };
  for (int i = 0; i < 64; ++i) push(static_cast<std::int64_t>(rng.uniform_below(1u << 30)));
  std::int64_t peeks_below = 0;
  for (int i = 0; i < 40000 && !pending.empty(); ++i) {
    const auto first = std::min_element(pending.begin(), pending.end());
    const Event e = q.pop();
    ASSERT_EQ(e.time.ps(), first->first);
    ASSERT_EQ(e.payload.id, first->second);
    const std::int64_t now = e.time.ps();
    pending.erase(first);
    const std::int64_t next = q.empty() ? now + (1 << 20) : q.top().time.ps();
    const auto pushes = rng.uniform_below(3);
    for (std::uint64_t k = 0; k < pushes; ++k) {
      // Delays of 0 to a few microseconds and a few ties with `now` and with the peeked time.
      const auto r = rng.uniform_below(10);
      const std::int64_t t = r == 0 ? now : r == 1 ? next : now + static_cast<std::int64_t>(rng.uniform_below(1u << (10 + 2 * r)));
      peeks_below += t < next ? 1 : 0;
      push(t);
    }
  }
  EXPECT_GT(peeks_below, 1000);  // the case under test happened often
}

}  // namespace
}  // namespace ws
