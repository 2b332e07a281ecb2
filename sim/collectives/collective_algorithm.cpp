// Algorithm names, selection thresholds and the schedule dispatcher.
#include "sim/collectives/collective_algorithm.hpp"

#include <cmath>
#include <stdexcept>

#include "sim/collectives/hierarchical_schedule.hpp"
#include "sim/collectives/rhd_schedule.hpp"
#include "sim/collectives/ring_schedule.hpp"
#include "sim/collectives/tree_schedule.hpp"

namespace ws {

const char* to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::ring: return "ring";
    case CollectiveAlgorithm::rhd: return "rhd";
    case CollectiveAlgorithm::tree: return "tree";
    case CollectiveAlgorithm::hierarchical: return "hierarchical";
    case CollectiveAlgorithm::binomial: return "binomial";
  }
  return "?";
}

std::optional<CollectiveAlgorithm> parse_algorithm(std::string_view text) {
  for (const auto a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::rhd, CollectiveAlgorithm::tree,
                       CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::binomial}) {
    if (text == to_string(a)) return a;
  }
  return std::nullopt;
}

bool supports(CollectiveAlgorithm a, CollectiveOp op) {
  if (a == CollectiveAlgorithm::tree) return op == CollectiveOp::all_reduce;
  if (a == CollectiveAlgorithm::binomial) return op != CollectiveOp::all_gather;
  return true;
}

Bytes nccl_tree_threshold(int nodes) {
  if (nodes < 2 || nodes > 32) return 0;
  constexpr double kAtTwoNodes = 4.0 * 1024 * 1024;
  return static_cast<Bytes>(std::llround(kAtTwoNodes * std::pow(nodes / 2.0, 1.5)));
}

Bytes nccl_tree_threshold(const CollectiveLibrary& library, int nodes) {
  const auto& t = library.tree_thresholds;
  if (t.empty()) return nccl_tree_threshold(nodes);
  if (nodes < t.front().nodes || nodes > t.back().nodes) return 0;
  std::size_t i = 0;
  while (t[i].nodes < nodes) ++i;  // the first point at or above `nodes` (exists: nodes <= last)
  if (t[i].nodes == nodes) return t[i].bytes;
  const auto a_bytes = static_cast<double>(t[i - 1].bytes);  // i >= 1: nodes > first point's
  const auto b_bytes = static_cast<double>(t[i].bytes);
  // Log-log between the neighbouring points (linear in size when one of them is 0 B).
  const double f = std::log(static_cast<double>(nodes) / t[i - 1].nodes) /
                   std::log(static_cast<double>(t[i].nodes) / t[i - 1].nodes);
  if (a_bytes <= 0 || b_bytes <= 0) return static_cast<Bytes>(std::llround(a_bytes + f * (b_bytes - a_bytes)));
  return static_cast<Bytes>(std::llround(a_bytes * std::pow(b_bytes / a_bytes, f)));
}

CollectiveAlgorithm select_algorithm(const CollectiveLibrary& library, CollectiveOp op, Bytes bytes, int members,
                                     int nodes) {
  if (members < 2) return CollectiveAlgorithm::ring;
  if (collective_family(library) == CollectiveFamily::nccl) {
    if (op == CollectiveOp::all_reduce && bytes < nccl_tree_threshold(library, nodes)) return CollectiveAlgorithm::tree;
    return CollectiveAlgorithm::ring;
  }
  if (collective_family(library) == CollectiveFamily::open_mpi) {
    return op == CollectiveOp::all_gather ? CollectiveAlgorithm::ring : CollectiveAlgorithm::binomial;
  }
  if (op == CollectiveOp::all_reduce) return CollectiveAlgorithm::rhd;
  return bytes < kMpichLongMessageBytes ? CollectiveAlgorithm::rhd : CollectiveAlgorithm::ring;
}

FlowSchedule build_schedule(CollectiveAlgorithm algorithm, CollectiveOp op, std::span<const int> devices,
                            Bytes bytes, const ScheduleOptions& options) {
  if (!supports(algorithm, op)) {
    throw std::invalid_argument(std::string("build_schedule: ") + to_string(algorithm) + " does not do " +
                                to_string(op));
  }
  switch (algorithm) {
    case CollectiveAlgorithm::ring:
      return ring_schedule(op, devices, bytes,
                           RingOptions{options.devices_per_node, options.channels, options.max_segments, options.node_order});
    case CollectiveAlgorithm::rhd: return rhd_schedule(op, devices, bytes);
    case CollectiveAlgorithm::tree:
      return node_tree_all_reduce_schedule(devices, bytes, options.devices_per_node, options.max_segments,
                                           options.node_order);
    case CollectiveAlgorithm::hierarchical:
      return hierarchical_schedule(op, devices, bytes, options.devices_per_node, options.max_segments,
                                   options.node_order);
    case CollectiveAlgorithm::binomial:
      return op == CollectiveOp::all_reduce ? binomial_all_reduce_schedule(devices, bytes)
                                            : binomial_reduce_scatter_schedule(devices, bytes);
  }
  return {};
}

}  // namespace ws
