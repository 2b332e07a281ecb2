// FNV-1a, 64 bit: a stable checksum of text (std::hash differs between platforms and runs).
#pragma once

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

}  // namespace ws
