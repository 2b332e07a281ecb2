#include "workload/layout.hpp"

#include <charconv>
#include <fmt/format.h>

namespace ws {

RankCoords coords_of(const Layout& l, int rank) {
  return RankCoords{rank % l.x, (rank / l.x) % l.y, (rank / (l.x * l.y)) % l.z, rank / (l.x * l.y * l.z)};
}

int rank_of(const Layout& l, const RankCoords& c) {
  return c.x + l.x * (c.y + l.y * (c.z + l.z * c.data));
}

std::string to_string(const Layout& l) { return fmt::format("{}x{}x{}x{}", l.data, l.x, l.y, l.z); }

bool holds_devices(const Layout& l, long long devices) {
  long long product = 1;
  for (const int part : {l.data, l.x, l.y, l.z}) {
    if (part < 1) return false;
    product *= part;  // <= devices x INT_MAX before the check below: no overflow
    if (product > devices) return false;
  }
  return product == devices;
}

std::optional<Layout> parse_layout(std::string_view text) {
  int parts[4] = {0, 0, 0, 0};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 4; ++i) {
    auto [next, ec] = std::from_chars(p, end, parts[i]);
    if (ec != std::errc() || parts[i] <= 0) return std::nullopt;
    p = next;
    if (i < 3) {
      if (p == end || *p != 'x') return std::nullopt;
      ++p;
    }
  }
  if (p != end) return std::nullopt;
  return Layout{parts[0], parts[1], parts[2], parts[3]};
}

}  // namespace ws
