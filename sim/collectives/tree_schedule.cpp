// Binomial reduce + broadcast, twice (mirrored), half the buffer each, pipelined in chunks.
#include "sim/collectives/tree_schedule.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace ws {

TreePipeline::TreePipeline(std::vector<int> member_of_position, const std::vector<int>& parent)
    : member_of_position_(std::move(member_of_position)), parent_(parent) {
  const auto P = member_of_position_.size();
  children_.resize(P);
  for (std::size_t q = 1; q < P; ++q) children_[static_cast<std::size_t>(parent_[q])].push_back(static_cast<int>(q));
  up_.assign(P, -1);
  down_.assign(P, -1);
  prev_up_.assign(P, -1);
  prev_down_.assign(P, -1);
}

TreePipeline TreePipeline::binomial(std::span<const int> members, bool mirrored) {
  const int p = static_cast<int>(members.size());
  std::vector<int> member_of_position(static_cast<std::size_t>(p)), parent(static_cast<std::size_t>(p), -1);
  for (int q = 0; q < p; ++q) {
    member_of_position[static_cast<std::size_t>(q)] = members[static_cast<std::size_t>(mirrored ? p - 1 - q : q)];
    if (q > 0) parent[static_cast<std::size_t>(q)] = q & (q - 1);
  }
  return TreePipeline(std::move(member_of_position), parent);
}

void TreePipeline::append_chunk(FlowSchedule& sc, Bytes b) {
  const int p = positions();
  auto member = [&](int q) { return member_of_position_[static_cast<std::size_t>(q)]; };
  // Reduce: children (higher positions) send before their parents can; a member sends this chunk
  // after its previous chunk arrived (one message at a time per link, as the pipeline does).
  for (int q = p - 1; q >= 1; --q) {
    std::vector<int> deps;
    for (const int c : children_[static_cast<std::size_t>(q)]) deps.push_back(up_[static_cast<std::size_t>(c)]);
    if (prev_up_[static_cast<std::size_t>(q)] >= 0) deps.push_back(prev_up_[static_cast<std::size_t>(q)]);
    up_[static_cast<std::size_t>(q)] = sc.add_send(member(q), member(parent_[static_cast<std::size_t>(q)]), b, deps);
  }
  // Broadcast: the root after its reduce of this chunk, everyone else after its parent's send.
  for (int q = 0; q < p; ++q) {
    std::vector<int> deps;
    if (q == 0) {
      for (const int c : children_[0]) deps.push_back(up_[static_cast<std::size_t>(c)]);
    } else {
      deps.push_back(down_[static_cast<std::size_t>(q)]);
    }
    for (const int c : children_[static_cast<std::size_t>(q)]) {
      std::vector<int> with_prev = deps;
      if (prev_down_[static_cast<std::size_t>(c)] >= 0) with_prev.push_back(prev_down_[static_cast<std::size_t>(c)]);
      down_[static_cast<std::size_t>(c)] = sc.add_send(member(q), member(c), b, with_prev);
    }
  }
  prev_up_ = up_;
  prev_down_ = down_;
}

void append_binomial_tree(FlowSchedule& sc, std::span<const int> members, bool mirrored, Bytes bytes, int chunks) {
  TreePipeline tree = TreePipeline::binomial(members, mirrored);
  for (int k = 0; k < chunks; ++k)
    tree.append_chunk(sc, bytes / static_cast<Bytes>(chunks) + (static_cast<Bytes>(k) < bytes % static_cast<Bytes>(chunks) ? 1 : 0));
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
  append_binomial_tree(sc, members, false, bytes, 1);
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
  append_binomial_tree(sc, members, false, bytes - bytes / 2, tree_chunks(bytes - bytes / 2));
  append_binomial_tree(sc, members, true, bytes / 2, tree_chunks(bytes - bytes / 2));
  return sc;
}

}  // namespace ws
