// FNV-1a, 64 bit: a stable checksum of text and bytes (std::hash differs between platforms and
// runs). Used by study resume records and by checkpoint shards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ws {

inline constexpr std::uint64_t kFnv1aOffset = 0xcbf29ce484222325ULL;

constexpr std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = kFnv1aOffset) {
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The same over a byte range, continuing from `h` (a shard hashed piece by piece).
inline std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

}  // namespace ws
