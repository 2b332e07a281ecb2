// Which algorithm a collective library runs for (op, size, communicator), and the one entry point
// that turns a call into a FlowSchedule for any algorithm.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/collectives/flow_schedule.hpp"
#include "workload/collective_op.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

enum class CollectiveAlgorithm { ring, rhd, tree, hierarchical, binomial };

const char* to_string(CollectiveAlgorithm a);  // "ring", "rhd", "tree", "hierarchical", "binomial"
std::optional<CollectiveAlgorithm> parse_algorithm(std::string_view text);  // inverse of to_string
// tree: all-reduce only; binomial (Open MPI libnbc, tree_schedule.hpp): all-reduce, reduce-scatter.
bool supports(CollectiveAlgorithm a, CollectiveOp op);

// Selection rules follow the library family, told by the library's name: "nccl" and "rccl" (and
// names containing them) select like NCCL, "openmpi" (and names containing it: the calibrated
// local machine files) like Open MPI's non-blocking collectives, every other name (cray-mpich,
// mpich) like MPICH. The rules and thresholds (sim/collectives/README.md):
//  NCCL:  all-gather, reduce-scatter: ring (NCCL/RCCL use only ring for them, machines.md 3.3);
//         all-reduce: tree below nccl_tree_threshold(nodes), else ring.
//  MPICH: all-reduce: rhd (MPICH's default for commutative ops; below 2 KiB MPICH uses plain
//         recursive doubling, which we approximate by rhd);
//         all-gather: rhd below 512 KiB of output (MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE), else ring;
//         reduce-scatter: rhd below 512 KiB of input (MPIR_CVAR_REDSCAT_COMMUTATIVE_LONG_MSG_SIZE),
//         else ring (MPICH's pairwise exchange: same bytes and p - 1 steps).
//  Open MPI (coll/libnbc, the engine's MPI_Iallreduce in place, MPI_Ireduce_scatter_block,
//         MPI_Iallgather): all-reduce and reduce-scatter binomial; all-gather ring (libnbc's
//         linear exchange moves the same bytes per member, in one step instead of p - 1).
// (The family comes from the library's name: collective_family, sim/machine/machine.hpp.)

// NCCL tree/ring switch point for all-reduce. From the library's `tree_threshold` points when the
// machine file has them: log-log interpolation between points, 0 (ring) below the first and above
// the last node count. Otherwise the default, an estimate borrowed from the CSCS NCCL tuner for
// Alps (machines.md 3.1 [V]: 4 MiB at 2 nodes, 256 MiB at 32, ring only above 32 nodes; in between
// 4 MiB x (nodes / 2)^1.5, a power law through both anchors; one node: 0). No RCCL table was found.
Bytes nccl_tree_threshold(int nodes);
Bytes nccl_tree_threshold(const CollectiveLibrary& library, int nodes);
inline constexpr Bytes kMpichLongMessageBytes = 512 * 1024;

CollectiveAlgorithm select_algorithm(const CollectiveLibrary& library, CollectiveOp op, Bytes bytes, int members,
                                     int nodes);

struct ScheduleOptions {
  int devices_per_node = 1;
  int channels = 1;      // ring channels (see RingOptions); the job uses the node's NIC count
  int max_segments = 0;  // ring step coalescing (see append_ring); 0 = every step its own send
  std::vector<int> node_order;  // a full node's ring order (intra_node_ring_order); empty: as given
};

// The schedule of one call. Throws std::invalid_argument if !supports(algorithm, op).
FlowSchedule build_schedule(CollectiveAlgorithm algorithm, CollectiveOp op, std::span<const int> devices,
                            Bytes bytes, const ScheduleOptions& options);

}  // namespace ws
