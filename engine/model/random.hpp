// Seeded random numbers with our own distributions (the standard library's differ between
// implementations, so runs would not reproduce across compilers): SplitMix64 and Box-Muller.
#pragma once

#include <cmath>
#include <cstdint>

namespace ws {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  // An independent stream per (seed, component id), e.g. one per tensor or per sequence.
  SplitMix64(std::uint64_t seed, std::uint64_t stream) : state_(seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1))) {
    next();
  }

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); the modulo bias is below 2^-40 for the n we use.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace ws
