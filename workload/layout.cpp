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

std::string to_string(const Layout& l) {
  std::string text = fmt::format("{}x{}x{}x{}", l.data, l.x, l.y, l.z);
  if (!l.pipelined() && l.virtual_stages == 1) return text;
  text += fmt::format("/pp={}", l.pipeline);
  if (l.virtual_stages > 1) text += fmt::format(",vpp={}", l.virtual_stages);
  return text + fmt::format(",mb={}", l.micro_batches);
}

bool holds_devices(const Layout& l, long long devices) {
  long long product = 1;
  for (const int part : {l.data, l.x, l.y, l.z, l.pipeline}) {
    if (part < 1) return false;
    product *= part;  // <= devices x INT_MAX before the check below: no overflow
    if (product > devices) return false;
  }
  return product == devices;
}

namespace {

// A positive int at p, advancing p past it.
bool read_positive(const char*& p, const char* end, int& value) {
  auto [next, ec] = std::from_chars(p, end, value);
  if (ec != std::errc() || value <= 0) return false;
  p = next;
  return true;
}

}  // namespace

std::optional<Layout> parse_layout(std::string_view text) {
  int parts[4] = {0, 0, 0, 0};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 4; ++i) {
    if (!read_positive(p, end, parts[i])) return std::nullopt;
    if (i < 3) {
      if (p == end || *p != 'x') return std::nullopt;
      ++p;
    }
  }
  Layout layout{parts[0], parts[1], parts[2], parts[3]};
  if (p == end) return layout;
  if (*p != '/') return std::nullopt;
  // "/pp=4,vpp=2,mb=16": each key once, any order.
  bool seen[3] = {false, false, false};
  do {
    ++p;
    const std::string_view rest(p, static_cast<std::size_t>(end - p));
    int key = -1;
    for (const auto& [index, name] : {std::pair{0, std::string_view("pp=")}, std::pair{1, std::string_view("vpp=")},
                                      std::pair{2, std::string_view("mb=")}}) {
      if (rest.starts_with(name)) {
        key = index;
        p += name.size();
        break;
      }
    }
    if (key < 0 || seen[key]) return std::nullopt;
    seen[key] = true;
    int& value = key == 0 ? layout.pipeline : key == 1 ? layout.virtual_stages : layout.micro_batches;
    if (!read_positive(p, end, value)) return std::nullopt;
  } while (p != end && *p == ',');
  if (p != end) return std::nullopt;
  return layout;
}

}  // namespace ws
