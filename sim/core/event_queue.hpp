// The discrete-event queue: a total, documented order on events, (time, insertion sequence), so
// that equal-time events pop first-in first-out and two runs of one scenario pop the same sequence.
// Events carry a small POD payload; the queue does not know what an event means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace ws {

// What an event is about, interpreted only by whoever pushed it (e.g. kind = "flow activates",
// id = flow index). Plain data so that the heap moves 32-byte records and never allocates.
struct EventPayload {
  std::uint32_t kind = 0;
  std::uint32_t id = 0;
  std::uint64_t data = 0;
};

struct Event {
  Time time;
  std::uint64_t sequence = 0;  // insertion order: the tie-breaker for equal times
  EventPayload payload;
};

// Min-heap on (time, sequence). A 4-ary implicit heap in one vector: shallower than a binary heap
// and cache-friendly; no allocation once the vector has grown to the peak number of pending events.
class EventQueue {
 public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return next_sequence_; }

  void push(Time time, EventPayload payload);
  // Precondition: !empty().
  const Event& top() const { return heap_.front(); }
  Event pop();
  void clear();

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.sequence < b.sequence);
  }
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace ws
