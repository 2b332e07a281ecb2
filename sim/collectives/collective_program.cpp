// Phases from a FlowSchedule: sends grouped by the depth of their dependency chain.
#include "sim/collectives/collective_program.hpp"

#include <algorithm>

#include "sim/collectives/ring_schedule.hpp"
#include "sim/collectives/tree_schedule.hpp"
#include "base/check.hpp"

namespace ws {

namespace {

// Large enough that one byte of rounding per chunk is negligible, small enough for any p.
constexpr Bytes kReferenceBytes = Bytes{1} << 40;

}  // namespace

namespace {

// Send depths of a schedule: 1 + the deepest send each waits for.
std::vector<int> send_depths(const FlowSchedule& schedule, int& deepest) {
  std::vector<int> depth(schedule.size(), 0);
  deepest = 0;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    int d = 0;
    for (const int a : schedule.after(static_cast<int>(s))) d = std::max(d, depth[static_cast<std::size_t>(a)]);
    depth[s] = d + 1;
    deepest = std::max(deepest, depth[s]);
  }
  return depth;
}

// Members per node of a communicator when every node holds the same number, else 1.
int local_ranks(std::span<const int> devices, int devices_per_node) {
  const auto nodes = members_by_node(devices, devices_per_node);
  const std::size_t L = nodes.front().size();
  const bool uniform = std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == L; });
  return nodes.size() >= 2 && L >= 2 && uniform ? static_cast<int>(L) : 1;
}

CollectiveProgram tree_program(std::span<const std::vector<int>> communicators, const ScheduleOptions& options) {
  CollectiveProgram program;
  program.algorithm = CollectiveAlgorithm::tree;
  const int L = local_ranks(communicators.front(), options.devices_per_node);
  program.tree_local_ranks = L;
  // One chunk per tree (bytes / (2 L) = kTreeChunkBytes); the tree has no ring steps to merge.
  const Bytes reference = 2 * static_cast<Bytes>(L) * kTreeChunkBytes;
  const FlowSchedule schedule =
      build_schedule(CollectiveAlgorithm::tree, CollectiveOp::all_reduce, communicators.front(), reference, options);
  int deepest = 0;
  const std::vector<int> depth = send_depths(schedule, deepest);
  program.phases.resize(static_cast<std::size_t>(deepest));
  std::vector<Bytes> largest(program.phases.size(), 0);
  Bytes steady_largest = 0;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    const ScheduledSend& send = schedule.send(static_cast<int>(s));
    const auto k = static_cast<std::size_t>(depth[s] - 1);
    largest[k] = std::max(largest[k], send.bytes);
    steady_largest = std::max(steady_largest, send.bytes);
    program.phases[k].steps = std::max(program.phases[k].steps, 1 + send.merged_steps);
    program.phases[k].pipeline = 1;  // one chunk's hop, up or down a chain or a tree level
    program.after.emplace_back(schedule.after(static_cast<int>(s)).begin(), schedule.after(static_cast<int>(s)).end());
    program.merged_steps.push_back(send.merged_steps);
  }
  for (std::size_t s = 0; s < schedule.size(); ++s) program.phases[static_cast<std::size_t>(depth[s] - 1)].sends.push_back(static_cast<int>(s));
  for (std::size_t k = 0; k < program.phases.size(); ++k)
    program.phases[k].bytes_fraction = static_cast<double>(largest[k]) / static_cast<double>(reference);
  // Every hop busy at once, one chunk each (the chains' and the trees' levels): a step per chunk.
  CollectivePhase steady;
  steady.pipeline = 2;
  steady.bytes_fraction = static_cast<double>(steady_largest) / static_cast<double>(reference);
  for (const std::vector<int>& devices : communicators) {
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      const ScheduledSend& send = schedule.send(static_cast<int>(s));
      const auto k = static_cast<std::size_t>(depth[s] - 1);
      const TrafficDemand t{devices[static_cast<std::size_t>(send.from)], devices[static_cast<std::size_t>(send.to)],
                            static_cast<double>(send.bytes) / static_cast<double>(largest[k])};
      program.phases[k].transfers.push_back(t);
      steady.transfers.push_back(
          {t.src_device, t.dst_device, static_cast<double>(send.bytes) / static_cast<double>(steady_largest)});
    }
  }
  // The steady phase runs between filling the pipeline (a chunk's first pass through every stage)
  // and draining it; as a sum of times, its place does not matter.
  program.phases.push_back(std::move(steady));
  return program;
}

}  // namespace

CollectiveProgram collective_program(CollectiveAlgorithm algorithm, CollectiveOp op,
                                     std::span<const std::vector<int>> communicators,
                                     const ScheduleOptions& options) {
  CollectiveProgram program;
  program.algorithm = algorithm;
  if (communicators.empty() || communicators.front().size() < 2) return program;
  if (algorithm == CollectiveAlgorithm::tree) return tree_program(communicators, options);
  const Bytes reference = kReferenceBytes;
  ScheduleOptions merged = options;
  merged.max_segments = 1;
  const FlowSchedule schedule = build_schedule(algorithm, op, communicators.front(), reference, merged);
  int deepest = 0;
  const std::vector<int> depth = send_depths(schedule, deepest);
  program.phases.resize(static_cast<std::size_t>(deepest));
  std::vector<Bytes> largest(program.phases.size(), 0);
  const bool chained = algorithm != CollectiveAlgorithm::ring;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    const auto k = static_cast<std::size_t>(depth[s] - 1);
    const ScheduledSend& send = schedule.send(static_cast<int>(s));
    largest[k] = std::max(largest[k], send.bytes);
    program.phases[k].steps = std::max(program.phases[k].steps, 1 + send.merged_steps);
    if (chained) {
      program.after.emplace_back(schedule.after(static_cast<int>(s)).begin(), schedule.after(static_cast<int>(s)).end());
      program.merged_steps.push_back(send.merged_steps);
    }
  }
  for (std::size_t k = 0; k < program.phases.size(); ++k) {
    CollectivePhase& phase = program.phases[k];
    phase.bytes_fraction = static_cast<double>(largest[k]) / static_cast<double>(reference);
    phase.transfers.reserve(communicators.size() * 8);
    // ring_schedule appends each (channel) ring's positions in order.
    if (algorithm == CollectiveAlgorithm::ring) phase.ring_members = static_cast<int>(communicators.front().size());
  }
  if (chained) {
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      const auto k = static_cast<std::size_t>(depth[s] - 1);
      if (schedule.send(static_cast<int>(s)).bytes > 0 && largest[k] > 0) program.phases[k].sends.push_back(static_cast<int>(s));
    }
  }
  // Every communicator runs the same sends between its own members.
  for (const std::vector<int>& devices : communicators) {
    WS_CHECK(devices.size() == communicators.front().size(), "every communicator of a program has one device per member");
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      const auto k = static_cast<std::size_t>(depth[s] - 1);
      const ScheduledSend& send = schedule.send(static_cast<int>(s));
      if (send.bytes == 0 || largest[k] == 0) continue;
      program.phases[k].transfers.push_back({devices[static_cast<std::size_t>(send.from)],
                                             devices[static_cast<std::size_t>(send.to)],
                                             static_cast<double>(send.bytes) / static_cast<double>(largest[k])});
    }
  }
  // A phase with no bytes (cannot happen for the reference sizes) would only add latency.
  std::erase_if(program.phases, [](const CollectivePhase& p) { return p.transfers.empty(); });
  return program;
}

}  // namespace ws
