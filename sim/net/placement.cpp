// Node selection and rank -> device mapping.
#include "sim/net/placement.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "base/random.hpp"

namespace ws {

const char* to_string(NodeAllocation allocation) {
  return allocation == NodeAllocation::scattered ? "scattered" : "contiguous";
}

std::vector<int> place_job_nodes(int available_nodes, int job_nodes, NodeAllocation allocation, std::uint64_t seed) {
  if (job_nodes < 1 || job_nodes > available_nodes) {
    throw std::invalid_argument("place_job_nodes: job needs more nodes than are available");
  }
  std::vector<int> all(static_cast<std::size_t>(available_nodes));
  std::iota(all.begin(), all.end(), 0);
  if (allocation == NodeAllocation::scattered) {
    RandomStream rng(seed, StreamId::placement);
    rng.shuffle(std::span<int>(all));
    all.resize(static_cast<std::size_t>(job_nodes));
    std::sort(all.begin(), all.end());
  } else {
    all.resize(static_cast<std::size_t>(job_nodes));
  }
  return all;
}

std::vector<int> devices_of_ranks(std::span<const int> job_nodes, int devices_per_node, int ranks,
                                  int ranks_per_node) {
  const int per_node = ranks_per_node > 0 ? ranks_per_node : devices_per_node;
  if (per_node > devices_per_node) {
    throw std::invalid_argument("devices_of_ranks: more ranks per node than devices per node");
  }
  if (static_cast<long>(ranks) > static_cast<long>(job_nodes.size()) * per_node) {
    throw std::invalid_argument("devices_of_ranks: more ranks than devices on the job's nodes");
  }
  std::vector<int> devices(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    devices[static_cast<std::size_t>(r)] =
        job_nodes[static_cast<std::size_t>(r / per_node)] * devices_per_node + r % per_node;
  }
  return devices;
}

}  // namespace ws
