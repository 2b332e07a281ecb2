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

// Collective over `world`: every rank's events gathered and merged into one trace document,
// returned on rank 0 (empty on the others). Writing it is the caller's job.
std::string gather_trace_json(const Timeline& timeline, const Communicator& world);

}  // namespace ws
