// The run's timeline as one Chrome trace / Perfetto JSON file: every rank's events gathered to
// rank 0 and merged, pid = rank, tid 0 = compute (kernels, waits), tid 1 = comm (collectives).
// Event names are the ones a simulator can reproduce: "fwd.block3.qkv.gemm", "allreduce.x",
// "reducescatter.z", "allgather.z", "allreduce.data", "wait.allreduce.data".
#pragma once

#include <string>

#include "engine/comm/communicator.hpp"
#include "engine/comm/timeline.hpp"

namespace ws {

// This rank's events as a JSON array of trace events (times in microseconds).
std::string trace_events_json(const Timeline& timeline, int rank);

// Collective over `world`. Rank 0 writes `path` (temp file + rename); throws std::runtime_error
// on rank 0 if the file cannot be written.
void write_trace(const Timeline& timeline, const Communicator& world, const std::string& path);

}  // namespace ws
