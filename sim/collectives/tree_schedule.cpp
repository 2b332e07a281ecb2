// Binomial reduce + broadcast, twice (mirrored), half the buffer each, pipelined in chunks.
#include "sim/collectives/tree_schedule.hpp"

#include <algorithm>
#include <vector>

namespace ws {

namespace {

}  // namespace

std::vector<int> append_binomial_tree(FlowSchedule& sc, std::span<const int> members, bool mirrored, Bytes bytes,
                                      int chunks, std::span<const std::vector<int>> entry) {
  const int p = static_cast<int>(members.size());
  auto member = [&](int q) { return members[static_cast<std::size_t>(mirrored ? p - 1 - q : q)]; };
  // The sends a position waits for before its first send (entry is indexed like `members`).
  auto entry_of = [&](int q) -> std::span<const int> {
    if (entry.empty()) return {};
    return entry[static_cast<std::size_t>(mirrored ? p - 1 - q : q)];
  };
  const auto P = static_cast<std::size_t>(p);
  std::vector<std::vector<int>> children(P);
  for (int q = 1; q < p; ++q) children[static_cast<std::size_t>(q & (q - 1))].push_back(q);
  std::vector<int> up(P, -1), down(P, -1);  // this chunk's sends (down: indexed by receiver)
  std::vector<int> prev_up(P, -1), prev_down(P, -1);
  for (int k = 0; k < chunks; ++k) {
    const Bytes b = bytes / static_cast<Bytes>(chunks) + (static_cast<Bytes>(k) < bytes % static_cast<Bytes>(chunks) ? 1 : 0);
    // Reduce: children (higher positions) send before their parents can; a member sends chunk k
    // after its chunk k - 1 arrived (one message at a time per link, as the pipeline does).
    for (int q = p - 1; q >= 1; --q) {
      std::vector<int> deps;
      for (const int c : children[static_cast<std::size_t>(q)]) deps.push_back(up[static_cast<std::size_t>(c)]);
      if (prev_up[static_cast<std::size_t>(q)] >= 0) deps.push_back(prev_up[static_cast<std::size_t>(q)]);
      if (k == 0)
        for (const int d : entry_of(q)) deps.push_back(d);
      up[static_cast<std::size_t>(q)] = sc.add_send(member(q), member(q & (q - 1)), b, deps);
    }
    // Broadcast: the root after its reduce of this chunk, everyone else after its parent's send.
    for (int q = 0; q < p; ++q) {
      std::vector<int> deps;
      if (q == 0) {
        for (const int c : children[0]) deps.push_back(up[static_cast<std::size_t>(c)]);
        if (k == 0)
          for (const int d : entry_of(0)) deps.push_back(d);
      } else {
        deps.push_back(down[static_cast<std::size_t>(q)]);
      }
      for (const int c : children[static_cast<std::size_t>(q)]) {
        std::vector<int> with_prev = deps;
        if (prev_down[static_cast<std::size_t>(c)] >= 0) with_prev.push_back(prev_down[static_cast<std::size_t>(c)]);
        down[static_cast<std::size_t>(c)] = sc.add_send(member(q), member(c), b, with_prev);
      }
    }
    prev_up = up;
    prev_down = down;
  }
  // Per position of `members`: the send that delivered its last chunk (the root's: its last
  // child's last reduce).
  std::vector<int> last(static_cast<std::size_t>(p), -1);
  for (int q = 0; q < p; ++q) {
    const int position = mirrored ? p - 1 - q : q;
    last[static_cast<std::size_t>(position)] =
        q == 0 ? (children[0].empty() ? -1 : prev_up[static_cast<std::size_t>(children[0].back())])
               : prev_down[static_cast<std::size_t>(q)];
  }
  return last;
}

namespace {

// The whole buffer up the binomial tree to member 0 in one piece; returns the sends into member 0.
std::vector<int> append_binomial_reduce(FlowSchedule& sc, int p, Bytes bytes) {
  const auto P = static_cast<std::size_t>(p);
  std::vector<std::vector<int>> children(P);
  for (int q = 1; q < p; ++q) children[static_cast<std::size_t>(q & (q - 1))].push_back(q);
  std::vector<int> up(P, -1);
  for (int q = p - 1; q >= 1; --q) {
    std::vector<int> deps;
    for (const int c : children[static_cast<std::size_t>(q)]) deps.push_back(up[static_cast<std::size_t>(c)]);
    up[static_cast<std::size_t>(q)] = sc.add_send(q, q & (q - 1), bytes, deps);
  }
  std::vector<int> into_root;
  for (const int c : children[0]) into_root.push_back(up[static_cast<std::size_t>(c)]);
  return into_root;
}

}  // namespace

FlowSchedule binomial_all_reduce_schedule(std::span<const int> devices, Bytes bytes) {
  FlowSchedule sc;
  sc.devices.assign(devices.begin(), devices.end());
  const int p = static_cast<int>(devices.size());
  if (p < 2) return sc;
  std::vector<int> members(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) members[static_cast<std::size_t>(i)] = i;
  append_binomial_tree(sc, members, false, bytes, 1, {});
  return sc;
}

FlowSchedule binomial_reduce_scatter_schedule(std::span<const int> devices, Bytes bytes) {
  FlowSchedule sc;
  sc.devices.assign(devices.begin(), devices.end());
  const int p = static_cast<int>(devices.size());
  if (p < 2) return sc;
  const std::vector<int> reduced = append_binomial_reduce(sc, p, bytes);
  const Bytes block = bytes / static_cast<Bytes>(p);
  for (int q = 1; q < p; ++q) sc.add_send(0, q, block, reduced);
  return sc;
}

int tree_chunks(Bytes bytes_per_tree) {
  const Bytes chunks = (bytes_per_tree + kTreeChunkBytes - 1) / kTreeChunkBytes;
  return static_cast<int>(std::clamp<Bytes>(chunks, 1, kMaxTreeChunks));
}

FlowSchedule tree_all_reduce_schedule(std::span<const int> devices, Bytes bytes) {
  FlowSchedule sc;
  sc.devices.assign(devices.begin(), devices.end());
  const int p = static_cast<int>(devices.size());
  if (p < 2) return sc;
  std::vector<int> members(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) members[static_cast<std::size_t>(i)] = i;
  append_binomial_tree(sc, members, false, bytes - bytes / 2, tree_chunks(bytes - bytes / 2), {});
  append_binomial_tree(sc, members, true, bytes / 2, tree_chunks(bytes - bytes / 2), {});
  return sc;
}

}  // namespace ws
