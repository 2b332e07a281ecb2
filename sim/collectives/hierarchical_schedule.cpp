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
      const auto got = append_ring(sc, phase, ring, share, entry, max_segments);
      for (std::size_t k = 0; k < n; ++k) done[static_cast<std::size_t>(ring[k])] = {got[k]};
    }
    last = std::move(done);
  };
  if (inter_tree) {
    // NCCL's tree on nodes of several devices (its "tree" algorithm): per channel, the node's
    // devices form a chain under one head, and the heads of all nodes a tree across them; a chunk
    // is reduced up the chain and the tree and broadcast back down, every hop of every chunk in
    // flight at once (TreePipeline). Channel j (one per local rank) has local rank j as its head,
    // so the channels leave each node through every device (and NIC), and carries bytes / L, half
    // on each of two trees mirrored over the nodes (a leaf of one is inner in the other).
    const int chunks = tree_chunks(bytes / static_cast<Bytes>(L) / 2);
    std::vector<TreePipeline> trees;
    for (std::size_t j = 0; j < L; ++j) {
      for (const bool mirrored : {false, true}) {
        // Positions: the heads in the binomial tree's order, then each node's chain, head first.
        std::vector<int> member_of_position(n * L), parent(n * L, -1);
        for (std::size_t t = 0; t < n; ++t) {
          const std::size_t node = mirrored ? n - 1 - t : t;
          member_of_position[t] = nodes[node][j];
          if (t > 0) parent[t] = static_cast<int>(t & (t - 1));
          for (std::size_t i = 1; i < L; ++i) {
            const std::size_t q = n + t * (L - 1) + (i - 1);
            member_of_position[q] = nodes[node][(j + i) % L];
            parent[q] = static_cast<int>(i == 1 ? t : q - 1);
          }
        }
        trees.emplace_back(std::move(member_of_position), parent);
      }
    }
    for (int k = 0; k < chunks; ++k) {
      const Bytes part =
          bytes / static_cast<Bytes>(chunks) + (static_cast<Bytes>(k) < bytes % static_cast<Bytes>(chunks) ? 1 : 0);
      const Bytes base = part / static_cast<Bytes>(L), extra = part % static_cast<Bytes>(L);
      for (std::size_t j = 0; j < L; ++j) {
        const Bytes share = base + (j < extra ? 1 : 0);
        trees[2 * j].append_chunk(sc, share - share / 2);
        trees[2 * j + 1].append_chunk(sc, share / 2);
      }
    }
    return sc;
  }
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
