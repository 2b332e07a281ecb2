// Starts weakscale-calibrate-mpi under mpirun on this host and reads back what it measured:
// one-way ping-pong times between two ranks and per-call collective times over all ranks.
#pragma once

#include <string>
#include <vector>

#include "harness/calibrate/alpha_beta_fit.hpp"
#include "harness/process/child_process.hpp"

namespace ws {

struct MpiProbeOptions {
  std::string probe_executable;  // path of weakscale-calibrate-mpi
  std::string mpirun = "mpirun";  // looked up on PATH
  int ranks = 2;
  bool quick = false;             // sizes up to 1 MiB, 3 batches of few calls (tests)
  RankLauncher launcher = {};     // empty: ranks on shared memory; see harness/netns
};

struct MpiMeasurements {
  std::string library;  // MPI_Get_library_version's first line
  int ranks = 0;
  int batches = 0;      // timed batches per size; each figure is the best batch's per-call time
  double largest_bytes = 0;
  std::vector<TimedTransfer> ping_pong;     // one-way (half round trip), ranks 0 <-> 1
  std::vector<TimedCollective> collectives;  // all-reduce, reduce-scatter, all-gather
  std::string command;  // the mpirun command line as run
};

// The probe's JSON:
//   {"library": s, "ranks": p, "batches": b, "ping_pong": [{"bytes", "seconds"}...],
//    "all_reduce" | "reduce_scatter" | "all_gather": [{"full_bytes", "seconds"}...]}
// Throws std::runtime_error when a key is missing or has the wrong type.
MpiMeasurements parse_mpi_probe_json(const std::string& text);

// Runs `mpirun -np ranks probe --out <temp file>` (adding the two OMPI_ALLOW_RUN_AS_ROOT variables
// when running as root, and retrying once with --oversubscribe if Open MPI reports too few slots).
// Throws std::runtime_error with mpirun's output when the run fails.
MpiMeasurements measure_mpi(const MpiProbeOptions& options);

}  // namespace ws
