#include "workload/layout.hpp"

#include <algorithm>
#include <charconv>
#include <span>
#include <vector>
#include <fmt/format.h>

namespace ws {

RankCoords coords_of(const Layout& l, int rank) {
  return RankCoords{rank % l.x, (rank / l.x) % l.y, (rank / (l.x * l.y)) % l.z, (rank / l.data_stride()) % l.data,
                    (rank / l.stage_stride()) % l.pipeline};
}

int rank_of(const Layout& l, const RankCoords& c) {
  return c.x + l.x * (c.y + l.y * c.z) + l.data_stride() * c.data + l.stage_stride() * c.stage;
}

const char* to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::megatron:
      return "megatron";
    case Strategy::fsdp:
      return "fsdp";
    case Strategy::four_d:
      break;
  }
  return "4d";
}

std::string to_string(const Layout& l) {
  if (l.strategy == Strategy::megatron) {
    std::string text = fmt::format("tp={},pp={}", l.y, l.pipeline);
    if (l.virtual_stages > 1) text += fmt::format(",vpp={}", l.virtual_stages);
    text += fmt::format(",dp={},mb={}", l.data_parallel(), l.micro_batches);
    if (l.zero_stage > 0) text += fmt::format(",zero={}", l.zero_stage);
    if (l.sequence_parallel) text += ",sp";
    return text + (l.order == RankOrder::stages_inside_data ? ",order=tp-pp-dp" : "");
  }
  if (l.strategy == Strategy::fsdp) {
    std::string text = fmt::format("dp_shard={}", l.z);
    if (l.data > 1) text += fmt::format(",dp_replicate={}", l.data);
    if (l.y > 1) text += fmt::format(",tp={}", l.y);
    return text;
  }
  std::string text = fmt::format("{}x{}x{}x{}", l.data, l.x, l.y, l.z);
  if (!l.pipelined() && l.virtual_stages == 1) return text;
  text += fmt::format("/pp={}", l.pipeline);
  if (l.virtual_stages > 1) text += fmt::format(",vpp={}", l.virtual_stages);
  return text + fmt::format(",mb={}", l.micro_batches);
}

Layout megatron_layout(int tp, int pp, int vpp, int dp, int mb, int zero_stage, bool sequence_parallel,
                       RankOrder order) {
  Layout l{dp, 1, tp, 1, pp, vpp, mb, Strategy::megatron, sequence_parallel, zero_stage};
  if (zero_stage == 3) l.data = 1, l.z = dp;  // parameters sharded over the data ranks: Gz
  if (l.pipeline > 1 && l.data > 1) l.order = order;
  return l;
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

namespace {

// "key=value,key=value" with each key once, from `keys`; values positive ints.
std::optional<std::vector<int>> parse_keyed(std::string_view text, std::span<const std::string_view> keys) {
  std::vector<int> values(keys.size(), 0);
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p != end) {
    const std::string_view rest(p, static_cast<std::size_t>(end - p));
    const auto eq = rest.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const auto key = std::find(keys.begin(), keys.end(), rest.substr(0, eq));
    if (key == keys.end()) return std::nullopt;
    int& value = values[static_cast<std::size_t>(key - keys.begin())];
    if (value != 0) return std::nullopt;  // a key twice
    p += eq + 1;
    if (!read_positive(p, end, value)) return std::nullopt;
    if (p != end && *p++ != ',') return std::nullopt;
    if (p == end && text.back() == ',') return std::nullopt;
  }
  return values;
}

std::optional<Layout> parse_framework_layout(std::string_view text) {
  static constexpr std::string_view kMegatron[] = {"tp", "pp", "vpp", "dp", "mb", "zero"};
  static constexpr std::string_view kFsdp[] = {"dp_shard", "dp_replicate", "tp"};
  auto or_one = [](int v) { return v == 0 ? 1 : v; };
  if (text.starts_with("dp_shard=")) {
    const auto v = parse_keyed(text, kFsdp);
    if (!v) return std::nullopt;
    Layout l{or_one((*v)[1]), 1, or_one((*v)[2]), (*v)[0]};
    l.strategy = Strategy::fsdp;
    return l;
  }
  // "sp" is a flag of its own, and "order=tp-pp-dp" (or the default's "order=tp-dp-pp") Megatron-LM's
  // rank order, each once, anywhere among the keys.
  std::string keyed(text);
  bool sp = false;
  std::optional<RankOrder> order;
  {
    std::string rebuilt;
    std::size_t start = 0;
    while (start <= keyed.size()) {
      const std::size_t comma = keyed.find(',', start);
      const std::string token = keyed.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (token == "sp") {
        if (sp) return std::nullopt;
        sp = true;
      } else if (token == "order=tp-pp-dp" || token == "order=tp-dp-pp") {
        if (order) return std::nullopt;
        order = token == "order=tp-pp-dp" ? RankOrder::stages_inside_data : RankOrder::stages_outermost;
      } else {
        rebuilt += (rebuilt.empty() ? "" : ",") + token;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    keyed = rebuilt;
  }
  const auto v = parse_keyed(keyed, kMegatron);
  if (!v || (*v)[3] == 0) return std::nullopt;
  return megatron_layout(or_one((*v)[0]), or_one((*v)[1]), or_one((*v)[2]), (*v)[3], or_one((*v)[4]), (*v)[5], sp,
                         order.value_or(RankOrder::stages_outermost));
}

}  // namespace

std::optional<Layout> parse_layout(std::string_view text) {
  if (!text.empty() && (text.front() < '0' || text.front() > '9')) return parse_framework_layout(text);
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
