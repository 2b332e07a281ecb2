// Three phases of rings glued by per-member dependencies.
#include "sim/collectives/hierarchical_schedule.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "sim/collectives/ring_schedule.hpp"
#include "sim/collectives/tree_schedule.hpp"

namespace ws {

namespace {

FlowSchedule two_level(CollectiveOp op, std::span<const int> devices, Bytes bytes, int devices_per_node,
                       int max_segments, std::span<const int> node_order, bool inter_tree) {
  auto nodes = members_by_node(devices, devices_per_node);
  const std::size_t L = nodes.front().size();
  const bool uniform = std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == L; });
  if (nodes.size() < 2 || L < 2 || !uniform) {
    if (inter_tree) return tree_all_reduce_schedule(devices, bytes);
    return ring_schedule(op, devices, bytes, RingOptions{devices_per_node, 1, max_segments, {}});
  }
  if (node_order.size() == L) {
    std::vector<std::size_t> position(L);
    for (std::size_t i = 0; i < L; ++i) position[static_cast<std::size_t>(node_order[i])] = i;
    auto local = [&](int member) { return position[static_cast<std::size_t>(devices[static_cast<std::size_t>(member)] % devices_per_node)]; };
    for (auto& node : nodes) std::sort(node.begin(), node.end(), [&](int a, int b) { return local(a) < local(b); });
  }
  FlowSchedule sc;
  sc.devices.assign(devices.begin(), devices.end());
  const std::size_t n = nodes.size();
  // Per member: the sends that delivered its receives of the previous phase.
  std::vector<std::vector<int>> last(devices.size());
  auto intra = [&](CollectiveOp phase) {
    // Two rings in opposite directions, half the bytes each, so both directions of every
    // intra-node link carry data (a node of two already uses both with one ring).
    const int rings = L > 2 ? 2 : 1;
    std::vector<std::vector<int>> done(devices.size());
    for (const auto& node : nodes) {
      for (int r = 0; r < rings; ++r) {
        std::vector<int> order(node.begin(), node.end());
        if (r == 1) std::reverse(order.begin(), order.end());
        std::vector<std::vector<int>> entry(L);
        for (std::size_t j = 0; j < L; ++j) entry[j] = last[static_cast<std::size_t>(order[j])];
        const Bytes share = rings == 1 ? bytes : (r == 0 ? bytes - bytes / 2 : bytes / 2);
        const auto got = append_ring(sc, phase, order, share, entry, max_segments);
        for (std::size_t j = 0; j < L; ++j) done[static_cast<std::size_t>(order[j])].push_back(got[j]);
      }
    }
    last = std::move(done);
  };
  auto inter = [&](CollectiveOp phase) {
    const Bytes base = bytes / static_cast<Bytes>(L), extra = bytes % static_cast<Bytes>(L);
    std::vector<std::vector<int>> done(devices.size());
    for (std::size_t j = 0; j < L; ++j) {
      std::vector<int> ring(n);
      std::vector<std::vector<int>> entry(n);
      for (std::size_t k = 0; k < n; ++k) {
        ring[k] = nodes[k][j];
        entry[k] = last[static_cast<std::size_t>(ring[k])];
      }
      const Bytes share = base + (j < extra ? 1 : 0);
      if (inter_tree) {
        // Two mirrored trees, half the share each, both pipelined.
        const int chunks = tree_chunks(share - share / 2);
        const auto a = append_binomial_tree(sc, ring, false, share - share / 2, chunks, entry);
        const auto b = append_binomial_tree(sc, ring, true, share / 2, chunks, entry);
        for (std::size_t k = 0; k < n; ++k) {
          auto& d = done[static_cast<std::size_t>(ring[k])];
          for (const int id : {a[k], b[k]})
            if (id >= 0) d.push_back(id);
        }
        continue;
      }
      const auto got = append_ring(sc, phase, ring, share, entry, max_segments);
      for (std::size_t k = 0; k < n; ++k) done[static_cast<std::size_t>(ring[k])] = {got[k]};
    }
    last = std::move(done);
  };
  switch (op) {
    case CollectiveOp::all_reduce:
      intra(CollectiveOp::reduce_scatter);
      inter(CollectiveOp::all_reduce);
      intra(CollectiveOp::all_gather);
      break;
    case CollectiveOp::reduce_scatter:
      intra(CollectiveOp::reduce_scatter);
      inter(CollectiveOp::reduce_scatter);
      break;
    case CollectiveOp::all_gather:
      inter(CollectiveOp::all_gather);
      intra(CollectiveOp::all_gather);
      break;
  }
  return sc;
}

}  // namespace

FlowSchedule hierarchical_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes, int devices_per_node,
                                   int max_segments, std::span<const int> node_order) {
  return two_level(op, devices, bytes, devices_per_node, max_segments, node_order, false);
}

FlowSchedule node_tree_all_reduce_schedule(std::span<const int> devices, Bytes bytes, int devices_per_node,
                                           int max_segments, std::span<const int> node_order) {
  return two_level(CollectiveOp::all_reduce, devices, bytes, devices_per_node, max_segments, node_order, true);
}

}  // namespace ws
