// The discrete-event queue: a total, documented order on events, (time, insertion order), so that
// equal-time events pop first-in first-out and two runs of one scenario pop the same sequence.
// Events carry a small POD payload; the queue does not know what an event means.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/units.hpp"

namespace ws {

// What an event is about, interpreted only by whoever pushed it (e.g. kind = "flow activates",
// id = flow index). Plain data so that the queue moves 24-byte records.
struct EventPayload {
  std::uint32_t kind = 0;
  std::uint32_t id = 0;
  std::uint64_t data = 0;
};

// No sequence number is stored: the buckets keep insertion order (below), which is all the
// tie-break needs, and the event stays 24 bytes (a third less memory traffic than with one).
struct Event {
  Time time;
  EventPayload payload;
};

// A radix heap on time, ten bits a digit. A discrete-event simulation never schedules before the
// event it is handling, so times only grow past the queue's reference (at most the earliest pending
// time); each event sits in the bucket named by the highest digit where its time differs from the
// reference and that digit's value (bucket order is time order), and moves down at most once per
// digit (about twice for delays of a few microseconds), instead of paying log n cache-missing
// comparisons per push and pop as a heap does (3.8-4.8 M events/s at 262,144 pending with a 4-ary
// heap; benchmarks/bench_event_queue.cpp). Ten bits rather than a byte: one move less per event
// at 262,144 pending (9.4-9.8 -> 11.6 M events/s), for sparser buckets at 16,384 (28 -> 18 M/s);
// the flow benchmarks do not tell them apart (benchmarks/README.md). Equal times always share a
// bucket, and every bucket holds its events in insertion order (a bucket only receives moved
// events while it is empty), so ties pop first-in first-out with no comparison of sequences. A push
// earlier than the reference (a DES does it after peeking at top(), which moves the reference up to
// the next pending time) is still correct and moves only the events below the highest digit where
// the two references differ (lower_reference).
class EventQueue {
 public:
  void reserve(std::size_t) {}
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::uint64_t pushed() const { return pushed_; }  // since construction or clear()

  void push(Time time, EventPayload payload);
  // Precondition: !empty(). Valid until the next push or pop.
  const Event& top();
  Event pop();
  void clear();

 private:
  // The time's bits with the sign flipped: unsigned order is time order.
  static std::uint64_t key_of(Time t) { return static_cast<std::uint64_t>(t.ps()) ^ (std::uint64_t{1} << 63); }
  // 0 for a key equal to the reference, else 1 + kValues x (the highest digit where they differ)
  // + the key's value of that digit.
  std::size_t bucket_of(std::uint64_t key) const;
  void put(const Event& e);
  // Makes a key below every pending key the reference, moving only the events that must move.
  void lower_reference(std::uint64_t key);
  // Brings the earliest events into bucket 0 (from front_ on), where all share one time.
  void settle();

  static constexpr unsigned kDigitBits = 10;
  static constexpr std::size_t kValues = std::size_t{1} << kDigitBits;
  static constexpr std::size_t kWords = kValues / 64;
  static constexpr std::size_t kDigits = (64 + kDigitBits - 1) / kDigitBits;
  static constexpr std::size_t kBuckets = 1 + kDigits * kValues;
  // Allocated at the first push: a simulation that never queues an event (a closed-form step) does
  // not pay for 7,169 empty buckets.
  std::vector<std::vector<Event>> buckets_;
  std::array<std::array<std::uint64_t, kWords>, kDigits> occupied_{};  // non-empty buckets per digit
  std::size_t front_ = 0;   // bucket 0's next event
  std::uint64_t last_ = 0;  // the reference key: no pending key is below it
  std::size_t size_ = 0;
  std::uint64_t pushed_ = 0;
};

}  // namespace ws
