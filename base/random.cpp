// Stream derivation and distributions of RandomStream.
#include "base/random.hpp"
#include "base/check.hpp"

#include <cmath>
#include <numbers>

namespace ws {

namespace {
__extension__ typedef unsigned __int128 U128;  // GCC/Clang builtin; pedantic-clean via __extension__
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t derive_seed(std::uint64_t root_seed, std::uint64_t component_id) {
  // Mixing twice keeps (seed, id) and (seed', id') with seed ^ id == seed' ^ id' apart.
  return splitmix64(splitmix64(root_seed) ^ splitmix64(component_id + 0x632BE59BD9B4E019ULL));
}

double SplitMix64::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

double RandomStream::uniform01() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

std::uint64_t RandomStream::uniform_below(std::uint64_t n) {
  WS_CHECK(n > 0, "a uniform draw below a positive bound");
  U128 m = static_cast<U128>(engine_()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<U128>(engine_()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double RandomStream::normal(double mean, double sd) {
  const double u1 = 1.0 - uniform01();  // in (0, 1]: log is finite
  const double u2 = uniform01();
  return mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double RandomStream::exponential(double mean) {
  return -mean * std::log(1.0 - uniform01());
}

}  // namespace ws
