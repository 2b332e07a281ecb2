// Radix-heap buckets for EventQueue.
#include "sim/core/event_queue.hpp"
#include "base/check.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace ws {

std::size_t EventQueue::bucket_of(std::uint64_t key) const {
  const std::uint64_t d = key ^ last_;
  if (d == 0) return 0;
  const auto digit = static_cast<std::size_t>(63 - std::countl_zero(d)) / kDigitBits;
  return 1 + digit * kValues + static_cast<std::size_t>((key >> (kDigitBits * digit)) & (kValues - 1));
}

void EventQueue::put(const Event& e) {
  const std::size_t b = bucket_of(key_of(e.time));
  buckets_[b].push_back(e);
  if (b > 0) {
    const std::size_t digit = (b - 1) / kValues, value = (b - 1) % kValues;
    occupied_[digit][value / 64] |= std::uint64_t{1} << (value % 64);
  }
}

void EventQueue::push(Time time, EventPayload payload) {
  if (buckets_.empty()) buckets_.resize(kBuckets);
  ++pushed_;
  ++size_;
  const std::uint64_t key = key_of(time);
  if (key < last_) lower_reference(key);
  put(Event{time, payload});
}

void EventQueue::lower_reference(std::uint64_t key) {
  // Let D be the highest digit where the new reference and the old one differ. A pending event whose
  // highest digit differing from the old reference is D or above keeps its bucket (its digits above
  // that one are the old reference's, so the new one's too). Every other pending event (bucket 0, and
  // the buckets of digits below D) agrees with the old reference from digit D up, so it belongs to one
  // bucket, (D, the old reference's digit D), which is empty (no pending key differs from the old
  // reference there with that same value). They move there in bucket order: equal times share a
  // bucket, so ties stay first-in first-out. This is the DES's common case, not a rare one: a caller
  // that peeks at top() (which settles the reference on the next pending time) and then schedules
  // something before that time lands here, and re-bucketing every pending event cost a third of a
  // study's run time.
  const std::uint64_t differ = key ^ last_;
  const auto top_digit = static_cast<std::size_t>(63 - std::countl_zero(differ)) / kDigitBits;
  const std::uint64_t value = (last_ >> (kDigitBits * top_digit)) & (kValues - 1);
  std::vector<Event>& into = buckets_[1 + top_digit * kValues + value];
  WS_CHECK(into.empty(), "events are taken into an empty batch");
  into.insert(into.end(), buckets_[0].begin() + static_cast<std::ptrdiff_t>(front_), buckets_[0].end());
  buckets_[0].clear();
  front_ = 0;
  for (std::size_t digit = 0; digit < top_digit; ++digit) {
    for (std::size_t w = 0; w < kWords; ++w) {
      for (std::uint64_t bits = occupied_[digit][w]; bits != 0; bits &= bits - 1) {
        std::vector<Event>& from = buckets_[1 + digit * kValues + w * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
        into.insert(into.end(), from.begin(), from.end());
        from.clear();
      }
      occupied_[digit][w] = 0;
    }
  }
  if (!into.empty()) occupied_[top_digit][value / 64] |= std::uint64_t{1} << (value % 64);
  last_ = key;
}

void EventQueue::settle() {
  while (front_ == buckets_[0].size()) {
    buckets_[0].clear();
    front_ = 0;
    std::size_t b = 0;
    for (std::size_t digit = 0; digit < kDigits && b == 0; ++digit) {
      for (std::size_t w = 0; w < kWords; ++w) {
        if (const std::uint64_t bits = occupied_[digit][w]; bits != 0) {
          const std::size_t value = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
          occupied_[digit][w] &= ~(std::uint64_t{1} << (value % 64));
          b = 1 + digit * kValues + value;
          break;
        }
      }
    }
    WS_CHECK(b > 0, "a calendar bucket width is positive");
    std::vector<Event>& from = buckets_[b];
    if (key_of(from.front().time) == key_of(from.back().time) &&
        std::all_of(from.begin(), from.end(), [&](const Event& e) { return e.time == from.front().time; })) {
      // One time (often one event): the bucket, in insertion order, is the next run of bucket 0.
      last_ = key_of(from.front().time);
      std::swap(buckets_[0], from);
      continue;
    }
    // The bucket's smallest possible time (its digit set, every lower digit zero) becomes the
    // reference: no pending time is below it, and each event of the bucket moves to a lower digit in
    // the bucket's order, so no pass looks for the minimum and every bucket stays in insertion order.
    const std::size_t digit = (b - 1) / kValues;
    const std::uint64_t value = (b - 1) % kValues;
    const unsigned shift = kDigitBits * static_cast<unsigned>(digit);
    const std::uint64_t keep = shift + kDigitBits >= 64 ? 0 : ~std::uint64_t{0} << (shift + kDigitBits);
    last_ = (last_ & keep) | (value << shift);
    std::vector<Event> moving = std::move(from);
    from = {};
    for (const Event& e : moving) put(e);
    moving.clear();
    if (from.capacity() < moving.capacity()) from = std::move(moving);  // keep the storage
  }
}

const Event& EventQueue::top() {
  WS_CHECK(size_ > 0, "an event is taken from a non-empty queue");
  settle();
  return buckets_[0][front_];
}

Event EventQueue::pop() {
  WS_CHECK(size_ > 0, "an event is taken from a non-empty queue");
  settle();
  --size_;
  return buckets_[0][front_++];
}

void EventQueue::clear() {
  for (auto& b : buckets_) b.clear();
  occupied_ = {};
  front_ = 0;
  last_ = 0;
  size_ = 0;
  pushed_ = 0;
}

}  // namespace ws
