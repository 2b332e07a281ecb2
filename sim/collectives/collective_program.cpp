// Phases from a FlowSchedule: sends grouped by the depth of their dependency chain.
#include "sim/collectives/collective_program.hpp"

#include <algorithm>
#include <cassert>

#include "sim/collectives/tree_schedule.hpp"

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

CollectiveProgram tree_program(std::span<const std::vector<int>> communicators, Bytes bytes) {
  CollectiveProgram program;
  program.algorithm = CollectiveAlgorithm::tree;
  const int chunks = tree_chunks(bytes / 2);
  // One chunk per tree: every send moves one byte, a level per dependency depth.
  const FlowSchedule schedule = tree_all_reduce_schedule(communicators.front(), 2);
  int deepest = 0;
  const std::vector<int> depth = send_depths(schedule, deepest);
  program.phases.resize(static_cast<std::size_t>(deepest));
  for (CollectivePhase& phase : program.phases) phase.bytes_fraction = 1.0 / (2.0 * chunks);
  CollectivePhase steady;
  steady.bytes_fraction = (chunks - 1.0) / (2.0 * chunks);
  steady.steps = chunks - 1;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    program.phases[static_cast<std::size_t>(depth[s] - 1)].sends.push_back(static_cast<int>(s));
    program.after.emplace_back(schedule.after(static_cast<int>(s)).begin(), schedule.after(static_cast<int>(s)).end());
    program.merged_steps.push_back(0);
  }
  for (const std::vector<int>& devices : communicators) {
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      const ScheduledSend& send = schedule.send(static_cast<int>(s));
      const TrafficDemand t{devices[static_cast<std::size_t>(send.from)], devices[static_cast<std::size_t>(send.to)], 1.0};
      program.phases[static_cast<std::size_t>(depth[s] - 1)].transfers.push_back(t);
      if (chunks > 1) steady.transfers.push_back(t);
    }
  }
  if (chunks > 1) program.phases.push_back(std::move(steady));
  return program;
}

}  // namespace

Bytes program_bytes(CollectiveAlgorithm algorithm, Bytes bytes) {
  if (algorithm != CollectiveAlgorithm::tree) return kReferenceBytes;
  // The tree's phases depend on its chunk count only: the smallest buffer with that count.
  const int chunks = tree_chunks(bytes / 2);
  return chunks <= 1 ? 2 : 2 * (static_cast<Bytes>(chunks - 1) * kTreeChunkBytes + 1);
}

CollectiveProgram collective_program(CollectiveAlgorithm algorithm, CollectiveOp op,
                                     std::span<const std::vector<int>> communicators, Bytes bytes,
                                     const ScheduleOptions& options) {
  CollectiveProgram program;
  program.algorithm = algorithm;
  if (communicators.empty() || communicators.front().size() < 2) return program;
  if (algorithm == CollectiveAlgorithm::tree) return tree_program(communicators, bytes);
  const Bytes reference = program_bytes(algorithm, bytes);
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
    assert(devices.size() == communicators.front().size());
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
