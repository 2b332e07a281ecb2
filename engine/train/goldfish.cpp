#include "engine/train/goldfish.hpp"

namespace ws {

namespace {
// SplitMix64's finaliser: every input bit moves every output bit, so consecutive h-grams give
// independent verdicts.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

bool goldfish_drops(const int* preceding, int context, int k) {
  std::uint64_t hash = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < context; ++i)
    hash = mix(hash ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(preceding[i])));
  return hash % static_cast<std::uint64_t>(k) == 0;
}

long long apply_goldfish_mask(const GoldfishOptions& options, const int* inputs, int* targets, int sequences,
                              int seq) {
  long long kept = static_cast<long long>(sequences) * seq;
  if (!options.enabled()) return kept;
  const int h = options.context;
  for (int s = 0; s < sequences; ++s) {
    const int* in = inputs + static_cast<long long>(s) * seq;
    int* out = targets + static_cast<long long>(s) * seq;
    // Target i has inputs[0 .. i], i + 1 tokens, before it.
    for (int i = h - 1; i < seq; ++i)
      if (goldfish_drops(in + i - h + 1, h, options.k)) {
        out[i] = kIgnoredTarget;
        --kept;
      }
  }
  return kept;
}

}  // namespace ws
