// The reference the phase models are checked against: every send of every algorithm step its own
// flow on a FlowNetwork (max-min per flow; each member paced by its own receives, so members drift
// apart where their shares differ), routed by the same traffic model (each send sprayed at the
// Valiant share of its phase). Slow: for tests and `weakscale collective --every-step`.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sim/pricing/collective_pricing.hpp"
#include "sim/pricing/job_network.hpp"

namespace ws {

struct EveryStepResult {
  Time time;               // launch to the last receive of any communicator
  std::uint64_t flows = 0;
  Bytes bytes = 0;         // logical bytes sent
  Bytes delivered = 0;     // wire bytes the network delivered
  std::vector<double> link_bytes;  // per link of the topology: bytes it carried
};

// `max_sends`: the schedules are refused (InputError naming --every-step) when they hold more
// sends than this, before any runs: the reference's time grows faster than its sends.
EveryStepResult every_step_collective(JobNetwork& network, GroupGeometry g, CollectiveAlgorithm algorithm,
                                      CollectiveOp op, Bytes bytes,
                                      std::uint64_t max_sends = std::numeric_limits<std::uint64_t>::max());

// The every-step reference as a step's collective model (CollectiveModel::every_step): each call
// runs its algorithm's sends, every communicator of its kind, on one FlowNetwork shared by all
// calls in flight (on the kernel, beside the step's rank), in MPI's order per communicator. Slow
// (sends x flows in flight): a reference for small jobs, to hold the phase model of a whole step to.
std::unique_ptr<CollectivePricing> make_every_step_pricing(JobNetwork& network, const Layout& layout, Simulation& sim);

}  // namespace ws
