// Ring schedules: one send per position per step, step k + 1 waiting for the step-k receive.
#include "sim/collectives/ring_schedule.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "sim/collectives/ring.hpp"

namespace ws {

Bytes ring_chunk_bytes(CollectiveOp op, Bytes total, int p, int member, int step) {
  const int steps_reduce = op == CollectiveOp::all_reduce ? p - 1 : 0;
  const bool reducing = op == CollectiveOp::reduce_scatter || (op == CollectiveOp::all_reduce && step < steps_reduce);
  const int k = reducing ? step : step - steps_reduce;
  const int offset = reducing ? 0 : 1;
  const int chunk = ((member + offset - k) % p + p) % p;
  const Bytes base = total / static_cast<Bytes>(p), extra = total % static_cast<Bytes>(p);
  return base + (static_cast<Bytes>(chunk) < extra ? 1 : 0);
}

std::vector<int> append_ring(FlowSchedule& schedule, CollectiveOp op, std::span<const int> members, Bytes bytes,
                             std::span<const int> entry, int max_segments) {
  const int p = static_cast<int>(members.size());
  std::vector<int> last(static_cast<std::size_t>(p), -1);
  if (p < 2) return last;
  const int steps = ring_steps(op, p);
  const int segments = max_segments > 0 ? std::min(max_segments, steps) : steps;
  // prev[j]: the send that delivered position j's previous receive (from position j - 1).
  std::vector<int> prev(static_cast<std::size_t>(p), -1), next(static_cast<std::size_t>(p), -1);
  for (int s = 0; s < segments; ++s) {
    const int first_step = static_cast<int>(static_cast<long long>(s) * steps / segments);
    const int end_step = static_cast<int>(static_cast<long long>(s + 1) * steps / segments);
    for (int j = 0; j < p; ++j) {
      Bytes b = 0;
      for (int k = first_step; k < end_step; ++k) b += ring_chunk_bytes(op, bytes, p, j, k);
      int dep = s == 0 ? (entry.empty() ? -1 : entry[static_cast<std::size_t>(j)]) : prev[static_cast<std::size_t>(j)];
      const int to = (j + 1) % p;
      const int id = dep >= 0 ? schedule.add_send(members[static_cast<std::size_t>(j)],
                                                  members[static_cast<std::size_t>(to)], b, {dep},
                                                  end_step - first_step - 1)
                              : schedule.add_send(members[static_cast<std::size_t>(j)],
                                                  members[static_cast<std::size_t>(to)], b, {},
                                                  end_step - first_step - 1);
      next[static_cast<std::size_t>(to)] = id;
    }
    std::swap(prev, next);
  }
  return prev;
}

std::vector<std::vector<int>> members_by_node(std::span<const int> devices, int devices_per_node) {
  std::vector<std::vector<int>> nodes;
  std::map<int, std::size_t> index;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const int node = devices[i] / devices_per_node;
    const auto [it, fresh] = index.emplace(node, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(static_cast<int>(i));
  }
  return nodes;
}

FlowSchedule ring_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes, const RingOptions& options) {
  FlowSchedule schedule;
  schedule.devices.assign(devices.begin(), devices.end());
  const auto nodes = members_by_node(devices, options.devices_per_node);
  const std::size_t local = nodes.front().size();
  const bool uniform = std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == local; });
  const int channels = (options.channels > 1 && nodes.size() > 1 && local > 1 && uniform) ? options.channels : 1;
  if (channels == 1) {
    std::vector<int> order(devices.size());
    std::iota(order.begin(), order.end(), 0);
    append_ring(schedule, op, order, bytes, {}, options.max_segments);
    return schedule;
  }
  const auto L = static_cast<int>(local);
  for (int c = 0; c < channels; ++c) {
    const Bytes share = bytes / static_cast<Bytes>(channels) + (static_cast<Bytes>(c) < bytes % static_cast<Bytes>(channels) ? 1 : 0);
    const int rotation = static_cast<int>(static_cast<long long>(c) * L / channels);
    std::vector<int> order;
    order.reserve(devices.size());
    for (const auto& node : nodes) {
      for (int j = 0; j < L; ++j) order.push_back(node[static_cast<std::size_t>((j + rotation) % L)]);
    }
    append_ring(schedule, op, order, share, {}, options.max_segments);
  }
  return schedule;
}

}  // namespace ws
