// Binomial reduce + broadcast, twice (mirrored), half the buffer each.
#include "sim/collectives/tree_schedule.hpp"

#include <vector>

namespace ws {

namespace {

void append_binomial_tree(FlowSchedule& sc, int p, bool mirrored, Bytes bytes) {
  auto member = [&](int q) { return mirrored ? p - 1 - q : q; };
  std::vector<std::vector<int>> children(static_cast<std::size_t>(p));
  for (int q = 1; q < p; ++q) children[static_cast<std::size_t>(q & (q - 1))].push_back(q);
  // Reduce: children (higher positions) send before their parents can.
  std::vector<int> up(static_cast<std::size_t>(p), -1);
  for (int q = p - 1; q >= 1; --q) {
    std::vector<int> deps;
    for (const int c : children[static_cast<std::size_t>(q)]) deps.push_back(up[static_cast<std::size_t>(c)]);
    up[static_cast<std::size_t>(q)] = sc.add_send(member(q), member(q & (q - 1)), bytes, deps);
  }
  // Broadcast: the root after its reduce, everyone else after its parent's send.
  std::vector<int> down(static_cast<std::size_t>(p), -1);
  for (int q = 0; q < p; ++q) {
    std::vector<int> deps;
    if (q == 0) {
      for (const int c : children[0]) deps.push_back(up[static_cast<std::size_t>(c)]);
    } else {
      deps.push_back(down[static_cast<std::size_t>(q)]);
    }
    for (const int c : children[static_cast<std::size_t>(q)]) {
      down[static_cast<std::size_t>(c)] = sc.add_send(member(q), member(c), bytes, deps);
    }
  }
}

}  // namespace

FlowSchedule tree_all_reduce_schedule(std::span<const int> devices, Bytes bytes) {
  FlowSchedule sc;
  sc.devices.assign(devices.begin(), devices.end());
  const int p = static_cast<int>(devices.size());
  if (p < 2) return sc;
  append_binomial_tree(sc, p, false, bytes - bytes / 2);
  append_binomial_tree(sc, p, true, bytes / 2);
  return sc;
}

}  // namespace ws
