// 4-ary heap sift-up / sift-down for EventQueue.
#include "sim/core/event_queue.hpp"

#include <cassert>
#include <utility>

namespace ws {

namespace {
constexpr std::size_t kArity = 4;
}

void EventQueue::push(Time time, EventPayload payload) {
  Event e{time, next_sequence_++, payload};
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::pop() {
  assert(!heap_.empty());
  Event result = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return result;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    std::size_t best = first;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return result;
}

void EventQueue::clear() {
  heap_.clear();
  next_sequence_ = 0;
}

}  // namespace ws
