// Seeded random streams: one root seed, one independent stream per component derived from
// (seed, component id), and our own distributions, because the standard library's distributions
// differ between implementations and would break byte-identical results across compilers.
// Two generators, one mixer (splitmix64): RandomStream (mt19937_64) for the simulator's
// components, and SplitMix64 for the engine, whose streams are many and short (one per tensor,
// one per sequence of every step: a 8-byte state seeded in O(1), where mt19937_64 seeds 2.5 KB).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>

namespace ws {

// One splitmix64 step (Steele, Lea, Flood 2014): a bijective mixer used to derive stream seeds.
std::uint64_t splitmix64(std::uint64_t x);

// Seed of the stream of `component_id` under `root_seed`; distinct ids give unrelated seeds.
std::uint64_t derive_seed(std::uint64_t root_seed, std::uint64_t component_id);

// Component ids for the streams of the simulator, so that two components never share one.
enum class StreamId : std::uint64_t {
  placement = 1,
  routing = 2,
  collectives = 3,
  uncertainty = 4,
  cross_validation = 5,
  test = 1000
};

// splitmix64 as a generator: state advanced by the golden-ratio increment, each output mixed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  // An independent stream per (seed, component id), e.g. one per tensor or per sequence.
  SplitMix64(std::uint64_t seed, std::uint64_t stream) : state_(seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1))) {
    next();
  }

  std::uint64_t next() {
    const std::uint64_t out = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return out;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); the modulo bias is below 2^-40 for the n we use.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Standard normal by Box-Muller (two uniforms per call, no cached spare).
  double normal();

 private:
  std::uint64_t state_;
};

class RandomStream {
 public:
  RandomStream(std::uint64_t root_seed, std::uint64_t component_id)
      : engine_(derive_seed(root_seed, component_id)) {}
  RandomStream(std::uint64_t root_seed, StreamId id)
      : RandomStream(root_seed, static_cast<std::uint64_t>(id)) {}

  std::uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject). Precondition: n > 0.
  std::uint64_t uniform_below(std::uint64_t n);
  // Normal(mean, sd) by Box-Muller; uses two uniforms per call, no cached spare (simpler state).
  double normal(double mean, double sd);
  double exponential(double mean);

  // Fisher-Yates with uniform_below, identical on every standard library.
  template <class T>
  void shuffle(std::span<T> items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(uniform_below(i));
      std::swap(items[i - 1], items[j]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace ws
