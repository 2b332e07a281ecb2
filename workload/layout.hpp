// The 4D layout Gdata x Gx x Gy x Gz and rank coordinates (X fastest, then Y, Z, data), as in
// ../shared/docs/4d-algorithm.md. Shared by the engine (communicator split) and the simulator
// (placement of groups on the machine).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ws {

struct Layout {
  int data = 1;
  int x = 1;
  int y = 1;
  int z = 1;

  int devices() const { return data * x * y * z; }
  int tensor_parallel() const { return x * y * z; }
  friend bool operator==(const Layout&, const Layout&) = default;
};

struct RankCoords {
  int x = 0, y = 0, z = 0, data = 0;
  friend bool operator==(const RankCoords&, const RankCoords&) = default;
};

RankCoords coords_of(const Layout& layout, int rank);
int rank_of(const Layout& layout, const RankCoords& c);

std::string to_string(const Layout& layout);          // "64x2x2x2" (Gdata x Gx x Gy x Gz)
// Whether Gdata x Gx x Gy x Gz is `devices` (at most INT_MAX), for any layout parse_layout gives:
// unlike devices(), it cannot overflow on a product of four large parts.
bool holds_devices(const Layout& layout, long long devices);
std::optional<Layout> parse_layout(std::string_view text);  // inverse of to_string

}  // namespace ws
