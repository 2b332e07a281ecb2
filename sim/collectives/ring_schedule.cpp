// Ring schedules: one send per position per step, step k + 1 waiting for the step-k receive and
// for the position's own send kRingSlots steps earlier.
#include "sim/collectives/ring_schedule.hpp"

#include <algorithm>
#include <map>
#include <numeric>


namespace ws {

int ring_steps(CollectiveOp op, int members) {
  return op == CollectiveOp::all_reduce ? 2 * (members - 1) : members - 1;
}

namespace {

// Buffer slots per ring connection: NCCL_STEPS = 8 (NCCL src/include/device.h; RCCL keeps it).
constexpr int kRingSlots = 8;

// Bytes of the chunks (start - j) mod p, j = 0 .. n - 1 (n <= p): n base chunks, plus one byte for
// each of those indices below total mod p.
Bytes cyclic_chunk_bytes(Bytes total, int p, int start, int n) {
  const Bytes base = total / static_cast<Bytes>(p);
  const auto extra = static_cast<long long>(total % static_cast<Bytes>(p));
  const long long lo = ((start - n + 1) % p + p) % p;  // the indices form [lo, lo + n - 1] mod p
  const long long hi = lo + n;                          // exclusive, possibly past p
  long long larger = std::max(0LL, std::min(extra, std::min(hi, static_cast<long long>(p))) - lo);
  if (hi > p) larger += std::min(extra, hi - p);
  return base * static_cast<Bytes>(n) + static_cast<Bytes>(larger);
}

}  // namespace

// Sum of ring_chunk_bytes over steps [first, end), without visiting each step.
Bytes ring_segment_bytes(CollectiveOp op, Bytes total, int p, int member, int first, int end) {
  const int steps_reduce = op == CollectiveOp::all_reduce ? p - 1 : 0;
  Bytes sum = 0;
  // Reduce-scatter steps (all of a reduce-scatter, the first p - 1 of an all-reduce): chunk
  // (member - k) mod p at step k; all-gather steps k' = k - steps_reduce: chunk (member + 1 - k').
  const bool reducing_op = op != CollectiveOp::all_gather;
  const int reduce_end = op == CollectiveOp::reduce_scatter ? p - 1 : steps_reduce;
  if (reducing_op && first < reduce_end) {
    const int a = first, b = std::min(end, reduce_end);
    sum += cyclic_chunk_bytes(total, p, ((member - a) % p + p) % p, b - a);
  }
  if (op != CollectiveOp::reduce_scatter && end > steps_reduce) {
    const int a = std::max(first, steps_reduce) - steps_reduce, b = end - steps_reduce;
    sum += cyclic_chunk_bytes(total, p, ((member + 1 - a) % p + p) % p, b - a);
  }
  return sum;
}

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
                             std::span<const std::vector<int>> entry, int max_segments) {
  const int p = static_cast<int>(members.size());
  std::vector<int> last(static_cast<std::size_t>(p), -1);
  if (p < 2) return last;
  const int steps = ring_steps(op, p);
  const int segments = max_segments > 0 ? std::min(max_segments, steps) : steps;
  // prev[j]: the send that delivered position j's previous receive (from position j - 1). A
  // member's send also waits for its own send kRingSlots sends earlier to be delivered: a library
  // has that many buffer slots per peer, so a member runs at most that far ahead of what its
  // successor has taken. Without the bound, members run ahead of their own sends and max-min
  // sharing starves the oldest sends at scale.
  std::vector<int> prev(static_cast<std::size_t>(p), -1), next(static_cast<std::size_t>(p), -1);
  // Position j's last kRingSlots sends: own[j * kRingSlots + s % kRingSlots] is its send of segment s.
  std::vector<int> own(static_cast<std::size_t>(p) * kRingSlots, -1);
  const auto slot = [](std::size_t j, int s) { return j * kRingSlots + static_cast<std::size_t>(s % kRingSlots); };
  schedule.reserve(static_cast<std::size_t>(segments) * static_cast<std::size_t>(p),
                   2 * static_cast<std::size_t>(segments) * static_cast<std::size_t>(p));
  std::vector<int> deps;
  for (int s = 0; s < segments; ++s) {
    const int first_step = static_cast<int>(static_cast<long long>(s) * steps / segments);
    const int end_step = static_cast<int>(static_cast<long long>(s + 1) * steps / segments);
    for (int j = 0; j < p; ++j) {
      const auto J = static_cast<std::size_t>(j);
      const Bytes b = ring_segment_bytes(op, bytes, p, j, first_step, end_step);
      deps.clear();
      if (s > 0) {
        deps.push_back(prev[J]);
        if (s >= kRingSlots) deps.push_back(own[slot(J, s - kRingSlots)]);
      } else if (!entry.empty()) {
        for (const int d : entry[J]) {
          if (d >= 0) deps.push_back(d);
        }
      }
      const int to = (j + 1) % p;
      const int sent =
          schedule.add_send(members[J], members[static_cast<std::size_t>(to)], b, deps, end_step - first_step - 1);
      own[slot(J, s)] = sent;
      next[static_cast<std::size_t>(to)] = sent;
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

std::vector<int> intra_node_ring_order(const NodeSpec& node) {
  const int n = node.devices;
  std::vector<int> order(static_cast<std::size_t>(std::max(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  if (n < 3 || n > 9) return order;
  std::vector<double> bw(static_cast<std::size_t>(n * n), 0.0);
  for (const IntraNodeLink& l : node.links) {
    bw[static_cast<std::size_t>(l.device_a * n + l.device_b)] += l.bandwidth.bytes_per_s();
    bw[static_cast<std::size_t>(l.device_b * n + l.device_a)] += l.bandwidth.bytes_per_s();
  }
  std::vector<int> best = order;
  double best_min = -1, best_sum = -1;
  // Device 0 first: rotations of one cycle are the same cycle.
  do {
    double lo = 1e300, sum = 0;
    for (int i = 0; i < n; ++i) {
      const double b = bw[static_cast<std::size_t>(order[static_cast<std::size_t>(i)] * n +
                                                   order[static_cast<std::size_t>((i + 1) % n)])];
      lo = std::min(lo, b);
      sum += b;
    }
    if (lo > best_min || (lo == best_min && sum > best_sum)) {
      best = order;
      best_min = lo;
      best_sum = sum;
    }
  } while (std::next_permutation(order.begin() + 1, order.end()));
  return best;
}

FlowSchedule ring_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes, const RingOptions& options) {
  FlowSchedule schedule;
  schedule.devices.assign(devices.begin(), devices.end());
  auto nodes = members_by_node(devices, options.devices_per_node);
  const std::size_t local = nodes.front().size();
  const bool uniform = std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == local; });
  const int channels = (options.channels > 1 && local > 1 && uniform) ? options.channels : 1;
  if (channels == 1) {
    std::vector<int> order(devices.size());
    std::iota(order.begin(), order.end(), 0);
    append_ring(schedule, op, order, bytes, {}, options.max_segments);
    return schedule;
  }
  const auto L = static_cast<int>(local);
  if (options.node_order.size() == local) {
    // A full node: members in the node's ring order.
    std::vector<int> position(local);
    for (std::size_t i = 0; i < local; ++i) position[static_cast<std::size_t>(options.node_order[i])] = static_cast<int>(i);
    for (auto& node : nodes) {
      std::sort(node.begin(), node.end(), [&](int a, int b) {
        return position[static_cast<std::size_t>(devices[static_cast<std::size_t>(a)] % options.devices_per_node)] <
               position[static_cast<std::size_t>(devices[static_cast<std::size_t>(b)] % options.devices_per_node)];
      });
    }
  }
  for (int c = 0; c < channels; ++c) {
    const Bytes share = bytes / static_cast<Bytes>(channels) + (static_cast<Bytes>(c) < bytes % static_cast<Bytes>(channels) ? 1 : 0);
    // Channels come in pairs: forward channel c leaves a node from position c L / C and enters the
    // next at the position after it; the backward channel c + 1 leaves from the last position of
    // its slice, (c + 2) L / C - 1, and enters at the one before it. Exits and entries then differ
    // for all channels (and, with siblings adjacent in node_order, so do their NICs).
    const bool backward = c % 2 == 1;
    const int exit = backward ? static_cast<int>(static_cast<long long>(c + 1) * L / channels) - 1
                              : static_cast<int>(static_cast<long long>(c) * L / channels);
    const int rotation = backward ? exit : (exit + 1) % L;
    std::vector<int> order;
    order.reserve(devices.size());
    for (const auto& node : nodes) {
      for (int j = 0; j < L; ++j) order.push_back(node[static_cast<std::size_t>((j + rotation) % L)]);
    }
    if (backward) std::reverse(order.begin(), order.end());
    append_ring(schedule, op, order, share, {}, options.max_segments);
  }
  return schedule;
}

}  // namespace ws
