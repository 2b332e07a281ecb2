// Seeded random streams: one root seed, one independent stream per component derived from
// (seed, component id), and our own distributions, because the standard library's distributions
// differ between implementations and would break byte-identical results across compilers.
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
enum class StreamId : std::uint64_t { placement = 1, routing = 2, collectives = 3, uncertainty = 4, test = 1000 };

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
