// Recursive halving and doubling over p' = 2^k virtual ranks, with MPICH's pre/post steps for the
// members beyond p'.
#include "sim/collectives/rhd_schedule.hpp"

#include <vector>

namespace ws {

namespace {

// Bytes of blocks [lo, hi) when `total` is cut into n blocks, the first total % n one byte larger.
Bytes block_range_bytes(Bytes total, int n, int lo, int hi) {
  const Bytes base = total / static_cast<Bytes>(n), extra = total % static_cast<Bytes>(n);
  Bytes b = 0;
  for (int i = lo; i < hi; ++i) b += base + (static_cast<Bytes>(i) < extra ? 1 : 0);
  return b;
}

int largest_power_of_two_at_most(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

}  // namespace

FlowSchedule rhd_schedule(CollectiveOp op, std::span<const int> devices, Bytes bytes) {
  FlowSchedule sc;
  sc.devices.assign(devices.begin(), devices.end());
  const int p = static_cast<int>(devices.size());
  if (p < 2) return sc;
  const int q = largest_power_of_two_at_most(p);
  const int r = p - q;
  // Virtual rank v -> member: the odd member of each of the first r pairs, then the rest.
  std::vector<int> member_of(static_cast<std::size_t>(q));
  for (int v = 0; v < q; ++v) member_of[static_cast<std::size_t>(v)] = v < r ? 2 * v + 1 : v + r;
  // last[v]: the send that delivered v's latest receive (-1: none yet).
  std::vector<int> last(static_cast<std::size_t>(q), -1);
  auto deps_of = [&](int v) {
    const int d = last[static_cast<std::size_t>(v)];
    return d >= 0 ? std::vector<int>{d} : std::vector<int>{};
  };

  // Pre-step: extras hand their data to their partner.
  for (int v = 0; v < r; ++v) {
    const Bytes b = op == CollectiveOp::all_gather ? block_range_bytes(bytes, p, 2 * v, 2 * v + 1) : bytes;
    last[static_cast<std::size_t>(v)] = sc.add_send(2 * v, 2 * v + 1, b, {});
  }

  if (op != CollectiveOp::all_gather) {
    // Recursive halving over q blocks: keep the half holding your own block, send the other.
    std::vector<int> lo(static_cast<std::size_t>(q), 0), hi(static_cast<std::size_t>(q), q);
    for (int mask = q / 2; mask >= 1; mask /= 2) {
      std::vector<int> next(static_cast<std::size_t>(q));
      for (int v = 0; v < q; ++v) {
        const auto vi = static_cast<std::size_t>(v);
        const int partner = v ^ mask;
        const int mid = lo[vi] + mask;
        const bool keep_low = (v & mask) == 0;
        const Bytes b = keep_low ? block_range_bytes(bytes, q, mid, hi[vi]) : block_range_bytes(bytes, q, lo[vi], mid);
        const auto deps = deps_of(v);
        next[static_cast<std::size_t>(partner)] = sc.add_send(member_of[vi], member_of[static_cast<std::size_t>(partner)], b, deps);
        if (keep_low) hi[vi] = mid; else lo[vi] = mid;
      }
      last = next;
    }
  }
  if (op != CollectiveOp::reduce_scatter) {
    // Recursive doubling: send everything held, then hold twice as much.
    std::vector<Bytes> held(static_cast<std::size_t>(q));
    for (int v = 0; v < q; ++v) {
      const int m = member_of[static_cast<std::size_t>(v)];
      if (op == CollectiveOp::all_reduce) {
        held[static_cast<std::size_t>(v)] = block_range_bytes(bytes, q, v, v + 1);
      } else {
        held[static_cast<std::size_t>(v)] = block_range_bytes(bytes, p, m, m + 1) +
                                            (v < r ? block_range_bytes(bytes, p, m - 1, m) : 0);
      }
    }
    for (int mask = 1; mask < q; mask *= 2) {
      std::vector<int> next(static_cast<std::size_t>(q));
      std::vector<Bytes> grown(held);
      for (int v = 0; v < q; ++v) {
        const auto vi = static_cast<std::size_t>(v);
        const int partner = v ^ mask;
        const auto deps = deps_of(v);
        next[static_cast<std::size_t>(partner)] = sc.add_send(member_of[vi], member_of[static_cast<std::size_t>(partner)], held[vi], deps);
        grown[static_cast<std::size_t>(partner)] += held[vi];
      }
      held = grown;
      last = next;
    }
  }

  // Post-step: results back to the extras.
  for (int v = 0; v < r; ++v) {
    Bytes b = bytes;
    if (op == CollectiveOp::reduce_scatter) b = block_range_bytes(bytes, p, 2 * v, 2 * v + 1);
    if (op == CollectiveOp::all_gather) b = bytes - block_range_bytes(bytes, p, 2 * v, 2 * v + 1);
    sc.add_send(2 * v + 1, 2 * v, b, deps_of(v));
  }
  return sc;
}

}  // namespace ws
