// Placement, topology and the priced programs of the job's communicators.
#include "sim/pricing/job_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cmath>

#include "sim/collectives/ring_schedule.hpp"
#include "sim/collectives/tree_schedule.hpp"
#include "base/input_error.hpp"
#include "base/statistics.hpp"
#include "sim/net/placement.hpp"
#include "workload/comm_group.hpp"
#include "sim/net/traffic.hpp"

namespace ws {

GroupGeometry geometry(const Layout& layout, CommGroup group, int stage) {
  GroupGeometry g;
  g.stride = group_stride(layout, group), g.size = group_size(layout, group);
  // The pipeline group has one rank per stage and the world spans every stage: no stage of their own.
  if (group == CommGroup::pipeline || group == CommGroup::world || layout.pipeline == 1) return g;
  g.first = stage * layout.stage_stride(), g.stage_stride = layout.stage_stride(), g.stages = layout.pipeline;
  return g;
}

namespace {

int job_node_count(const Machine& machine, int devices, int ranks_per_node) {
  const int dpn = std::max(machine.node.devices, 1);
  if (ranks_per_node < 0 || ranks_per_node > dpn) {
    throw InputError({machine.source_file, 0, "ranks per node"}, std::to_string(ranks_per_node),
                     fmt::format("1 to the {} devices of a {} node", dpn, machine.name));
  }
  const int per_node = ranks_per_node > 0 ? ranks_per_node : dpn;
  const int nodes = (devices + per_node - 1) / per_node;
  if (devices < 1 || nodes > machine.nodes) {
    throw InputError({machine.source_file, 0, "devices"}, std::to_string(devices),
                     ranks_per_node > 0
                         ? fmt::format("1 to the machine's {} nodes x {} ranks per node", machine.nodes, per_node)
                         : fmt::format("1 to the machine's {} devices", machine.total_devices()));
  }
  return nodes;
}

Topology job_topology(const Machine& machine, const std::vector<int>& nodes) {
  const int built = nodes.back() + 1;
  // Valiant paths need the machine's other groups as intermediates.
  const bool detours = machine.network.routing != RoutingPolicy::minimal;
  return build_topology(machine, built, detours ? std::max(machine.network.groups, 1) : 0);
}

// Scales the phases that stand for schedule sends so that their latencies add up to the longest
// chain of path latencies through one communicator's schedule (the slowest communicator's).
void chain_latencies(const CollectiveProgram& program, const std::vector<std::vector<double>>& transfer_latency,
                     std::vector<PricedPhase>& phases) {
  const std::size_t sends = program.after.size();
  std::size_t communicators = 0;
  for (const CollectivePhase& phase : program.phases) {
    if (!phase.sends.empty()) communicators = phase.transfers.size() / phase.sends.size();
  }
  double longest = 0.0;
  std::vector<double> path(sends), done(sends);
  for (std::size_t c = 0; c < communicators; ++c) {
    std::fill(path.begin(), path.end(), 0.0);
    for (std::size_t k = 0; k < program.phases.size(); ++k) {
      const auto& ids = program.phases[k].sends;
      for (std::size_t j = 0; j < ids.size(); ++j)
        path[static_cast<std::size_t>(ids[j])] = transfer_latency[k][c * ids.size() + j];
    }
    for (std::size_t s = 0; s < sends; ++s) {
      double start = 0.0;
      for (const int a : program.after[s]) start = std::max(start, done[static_cast<std::size_t>(a)]);
      done[s] = start + (1 + program.merged_steps[s]) * path[s];
      longest = std::max(longest, done[s]);
    }
  }
  double phased = 0.0;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    if (!program.phases[k].sends.empty()) phased += phases[k].steps * static_cast<double>(phases[k].path_latency.ps());
  }
  if (phased <= 0.0 || longest >= phased) return;
  const double scale = longest / phased;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    if (program.phases[k].sends.empty()) continue;
    phases[k].path_latency = Time::from_ps(std::llround(scale * static_cast<double>(phases[k].path_latency.ps())));
  }
}

// FNV-1a over (src, dst, weight bits) with two offset bases, and the count. A ring's hop latency
// depends on how many steps its phase spans, so that enters the key too.
std::tuple<std::uint64_t, std::uint64_t, std::size_t> pattern_key(const CollectivePhase& phase) {
  const std::span<const TrafficDemand> transfers = phase.transfers;
  std::uint64_t a = 0xcbf29ce484222325ULL, b = 0x84222325cbf29ce4ULL;
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      const auto byte = static_cast<std::uint8_t>(v >> (8 * i));
      a = (a ^ byte) * 0x100000001b3ULL;
      b = (b ^ byte) * 0x100000001b3ULL;
    }
  };
  for (const TrafficDemand& t : transfers) {
    mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(t.src_device)) << 32 |
        static_cast<std::uint32_t>(t.dst_device));
    std::uint64_t bits = 0;
    std::memcpy(&bits, &t.weight, sizeof bits);
    mix(bits);
  }
  if (phase.ring_members > 0) mix(static_cast<std::uint64_t>(phase.steps) << 32 | static_cast<std::uint32_t>(phase.ring_members));
  return {a, b, transfers.size()};
}

}  // namespace

std::string network_fingerprint(const Machine& machine, int devices, NodeAllocation allocation,
                                int ranks_per_node) {
  const NodeSpec& node = machine.node;
  const DragonflySpec& n = machine.network;
  std::string f = fmt::format("devices {} {} nodes {} node {}\n", devices, to_string(allocation), machine.nodes,
                              node.devices);
  if (ranks_per_node > 0) f += fmt::format("ranks per node {}\n", ranks_per_node);
  for (const IntraNodeLink& l : node.links)
    f += fmt::format("link {} {} {} {}\n", l.device_a, l.device_b, l.bandwidth.bytes_per_s(), l.latency.ps());
  for (const Nic& nic : node.nics)
    f += fmt::format("nic {} {} {}\n", nic.attached_device, nic.bandwidth.bytes_per_s(), nic.latency.ps());
  f += fmt::format("dragonfly {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", n.groups, n.switches_per_group,
                   n.ports_per_switch, n.endpoints_per_switch, n.global_ports_per_switch,
                   n.global_links_per_group_pair, n.nodes_per_group, n.endpoint_link_bandwidth.bytes_per_s(),
                   n.local_link_bandwidth.bytes_per_s(), n.global_link_bandwidth.bytes_per_s(),
                   n.endpoint_link_latency.ps(), n.local_link_latency.ps(), n.global_link_latency.ps(),
                   n.switch_latency.ps(), to_string(n.routing), n.background_load);
  if (n.nodes_per_switch > 0) f += fmt::format("nodes per switch {}\n", n.nodes_per_switch);
  return f;
}

void JobNetwork::use_machine(const Machine& machine) {
  // Same network only: JobNetworks::get, the one caller, has just matched the two machines'
  // network_fingerprint (formatting both again here would cost a study a tenth of its time).
  machine_ = &machine;
}

JobNetwork& JobNetworks::get(const Machine& machine, int devices, NodeAllocation allocation, int ranks_per_node) {
  std::string key = network_fingerprint(machine, devices, allocation, ranks_per_node);
  for (auto& [k, network] : networks_) {
    if (k == key) {
      network->use_machine(machine);
      return *network;
    }
  }
  if (networks_.size() >= capacity_ && !networks_.empty()) networks_.erase(networks_.begin());
  networks_.emplace_back(std::move(key), std::make_unique<JobNetwork>(machine, devices, allocation, 1, ranks_per_node));
  return *networks_.back().second;
}

JobNetwork::JobNetwork(const Machine& machine, int devices, NodeAllocation allocation, std::uint64_t seed,
                       int ranks_per_node)
    : machine_(&machine),
      devices_(devices),
      allocation_(allocation),
      ranks_per_node_(ranks_per_node),
      job_nodes_(place_job_nodes(machine.nodes, job_node_count(machine, devices, ranks_per_node), allocation, seed)),
      device_of_rank_(devices_of_ranks(job_nodes_, std::max(machine.node.devices, 1), devices, ranks_per_node)),
      topology_(job_topology(machine, job_nodes_)),
      router_(topology_) {
  const int dpn = std::max(machine.node.devices, 1);
  capacity_ = link_capacities(topology_, machine.network.background_load);
  schedule_options_.devices_per_node = dpn;
  schedule_options_.channels = std::max(1, static_cast<int>(machine.node.nics.size()));
  schedule_options_.node_order = intra_node_ring_order(machine.node);
}

int ranks_on_a_node(const Machine& machine, int devices, int ranks_per_node) {
  return std::min(devices, ranks_per_node > 0 ? ranks_per_node : std::max(machine.node.devices, 1));
}

int JobNetwork::ranks_on_a_node() const { return ws::ranks_on_a_node(*machine_, devices_, ranks_per_node_); }

std::vector<std::vector<int>> JobNetwork::communicators(GroupGeometry g) const {
  std::vector<std::vector<int>> out;
  if (g.size < 1 || g.stride < 1) return out;
  const int stage = g.stages > 0 ? g.first / g.stage_stride : 0;
  for (int r = g.first; r < devices_; ++r) {
    if (g.stages > 0 && (r / g.stage_stride) % g.stages != stage) continue;  // another stage's rank
    if ((r / g.stride) % g.size != 0) continue;  // not a communicator's first member
    if (r + (g.size - 1) * static_cast<long long>(g.stride) >= devices_) continue;
    std::vector<int> members(static_cast<std::size_t>(g.size));
    for (int k = 0; k < g.size; ++k) members[static_cast<std::size_t>(k)] = device_of_rank(r + k * g.stride);
    out.push_back(std::move(members));
  }
  return out;
}

int JobNetwork::nodes_spanned(GroupGeometry g) {
  const auto known = nodes_spanned_.find(g);
  if (known != nodes_spanned_.end()) return known->second;
  const int dpn = std::max(machine_->node.devices, 1);
  std::vector<int> nodes;
  for (int k = 0; k < g.size && g.first + k * static_cast<long long>(g.stride) < devices_; ++k)
    nodes.push_back(device_of_rank(g.first + k * g.stride) / dpn);
  std::sort(nodes.begin(), nodes.end());
  const int spanned = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  nodes_spanned_.emplace(g, spanned);
  return spanned;
}

JobNetwork::Routed JobNetwork::route(GroupGeometry g, CollectiveAlgorithm algorithm, CollectiveOp op,
                                     bool with_links) {
  const auto comms = communicators(g);
  const CollectiveProgram program = collective_program(algorithm, op, comms, schedule_options_);
  TrafficRouter& router = router_;
  const RoutingPolicy policy = machine_->network.routing;
  std::vector<PricedPhase> phases;
  std::vector<std::vector<double>> transfer_latency;  // per phase and transfer (chained programs), ps
  // The schedule's chains need every transfer's latency: a known pattern does not keep them.
  const bool chained = !program.after.empty();
  for (const CollectivePhase& phase : program.phases) {
    // Chained phases are not kept by pattern: their key would cost a pass over their transfers.
    const PatternKey pattern = chained ? PatternKey{} : pattern_key(phase);
    const auto known = chained ? patterns_.end() : patterns_.find(pattern);
    if (known != patterns_.end() && (!with_links || known->second.links != nullptr)) {
      PricedPhase p = known->second;
      p.steps = phase.steps;
      p.bytes_fraction = phase.bytes_fraction;
      p.pipeline = phase.pipeline;
      phases.push_back(std::move(p));
      continue;
    }
    TrafficLoads loads = router.route(phase.transfers, policy == RoutingPolicy::non_minimal);
    if (policy == RoutingPolicy::adaptive &&
        bottleneck(loads.minimal, capacity_) > bottleneck(loads.fixed, capacity_) * (1.0 + 1e-9)) {
      // Minimal paths would be the bottleneck: adaptive routing may detour some of it.
      loads.valiant = router.valiant_loads();
    }
    PricedPhase p;
    p.valiant_share = valiant_share(loads, policy, capacity_);
    std::vector<LinkShare> links;
    if (with_links) {
      links = mix_routes(loads, p.valiant_share);
      p.time_per_byte = bottleneck(links, capacity_);
    } else {
      p.time_per_byte = mixed_bottleneck(loads, p.valiant_share, capacity_);
    }
    const double v = p.valiant_share;
    auto mixed = [v](Time minimal, Time valiant) {
      return (1.0 - v) * static_cast<double>(minimal.ps()) + v * static_cast<double>(valiant.ps());
    };
    double latency_ps = mixed(loads.minimal_latency, loads.valiant_latency);
    const auto ring = static_cast<std::size_t>(phase.ring_members);
    if (ring > 0 && phase.transfers.size() % ring == 0) {
      // Rings: a member's last receive ends a chain of `steps` consecutive hops around its ring;
      // the slowest such chain of any ring, per step.
      latency_ps = 0.0;
      const auto steps = static_cast<std::size_t>(phase.steps);
      std::vector<double> hop(ring);
      for (std::size_t first = 0; first < phase.transfers.size(); first += ring) {
        double cycle = 0.0;
        for (std::size_t i = 0; i < ring; ++i) {
          hop[i] = mixed(loads.demand_minimal_latency[first + i], loads.demand_valiant_latency[first + i]);
          cycle += hop[i];
        }
        const std::size_t rest = steps % ring;
        double window = 0.0, widest = 0.0;
        for (std::size_t i = 0; i < rest; ++i) window += hop[i];
        widest = window;
        for (std::size_t j = 1; j < ring && rest > 0; ++j) {
          window += hop[(j + rest - 1) % ring] - hop[j - 1];
          widest = std::max(widest, window);
        }
        latency_ps = std::max(latency_ps, (static_cast<double>(steps / ring) * cycle + widest) / static_cast<double>(steps));
      }
    }
    p.path_latency = Time::from_ps(static_cast<std::int64_t>(std::llround(latency_ps)));
    p.steps = phase.steps;
    p.bytes_fraction = phase.bytes_fraction;
    p.pipeline = phase.pipeline;
    for (const TrafficDemand& t : phase.transfers) p.transfer_weight += t.weight;
    p.inter_node = loads.inter_node;
    if (ring > 0 && !comms.empty()) {
      p.channels = std::max(1, static_cast<int>(phase.transfers.size() / ring / comms.size()));
    }
    if (with_links) p.links = std::make_shared<const std::vector<LinkShare>>(std::move(links));
    if (chained) {
      transfer_latency.emplace_back();
      for (std::size_t i = 0; i < phase.transfers.size(); ++i)
        transfer_latency.back().push_back(mixed(loads.demand_minimal_latency[i], loads.demand_valiant_latency[i]));
    } else {
      patterns_[pattern] = p;
    }
    phases.push_back(std::move(p));
  }
  if (chained) chain_latencies(program, transfer_latency, phases);
  return Routed{std::move(phases), program.tree_local_ranks};
}

const PricedProgram& JobNetwork::stage_transfer(int from, int to, const Layout& layout, bool with_links) {
  const int stride = layout.stage_stride(), stages = layout.pipeline;
  const auto key = std::make_tuple(from, to, stride);
  const auto known = stage_transfers_.find(key);
  if (known != stage_transfers_.end() && (!with_links || known->second.phases.front().links != nullptr))
    return known->second;
  // Every rank of stage `from` sends to the rank of the same grid position on stage `to`.
  std::vector<TrafficDemand> demands;
  for (int r = 0; r < devices_; ++r)
    if ((r / stride) % stages == from)
      demands.push_back({device_of_rank(r), device_of_rank(r + (to - from) * stride), 1.0});
  const RoutingPolicy policy = machine_->network.routing;
  TrafficLoads loads = router_.route(demands, policy == RoutingPolicy::non_minimal);
  if (policy == RoutingPolicy::adaptive &&
      bottleneck(loads.minimal, capacity_) > bottleneck(loads.fixed, capacity_) * (1.0 + 1e-9))
    loads.valiant = router_.valiant_loads();
  PricedPhase p;
  p.valiant_share = valiant_share(loads, policy, capacity_);
  if (with_links) {
    std::vector<LinkShare> links = mix_routes(loads, p.valiant_share);
    p.time_per_byte = bottleneck(links, capacity_);
    p.links = std::make_shared<const std::vector<LinkShare>>(std::move(links));
  } else {
    p.time_per_byte = mixed_bottleneck(loads, p.valiant_share, capacity_);
  }
  const double v = p.valiant_share;
  p.path_latency = Time::from_ps(static_cast<std::int64_t>(std::llround(
      (1.0 - v) * static_cast<double>(loads.minimal_latency.ps()) + v * static_cast<double>(loads.valiant_latency.ps()))));
  p.steps = 1;
  p.bytes_fraction = 1.0;
  p.transfer_weight = static_cast<double>(demands.size());
  p.inter_node = loads.inter_node;
  PricedProgram program;
  // A send is one step of one message: priced as the library's all-gather step between two ranks.
  program.algorithm = CollectiveAlgorithm::ring;
  program.op = CollectiveOp::all_gather;
  program.members = 2;
  const int dpn = std::max(machine_->node.devices, 1);
  // Whether the first ranks of the two stages share a node.
  program.nodes = device_of_rank(from * stride) / dpn == device_of_rank(to * stride) / dpn ? 1 : 2;
  program.phases.push_back(std::move(p));
  return stage_transfers_.insert_or_assign(key, std::move(program)).first->second;
}

double JobNetwork::expected_max_of_normals(int members) {
  const auto it = expected_max_.find(members);
  if (it != expected_max_.end()) return it->second;
  return expected_max_.emplace(members, ws::expected_max_of_normals(members)).first->second;
}

const PricedProgram& JobNetwork::program(GroupGeometry g, CollectiveAlgorithm algorithm, CollectiveOp op,
                                         Bytes bytes, bool with_links) {
  const RouteKey route_key{g, static_cast<int>(algorithm), static_cast<int>(op)};
  const auto lacks_links = [&](const std::vector<PricedPhase>& phases) {
    return with_links && !phases.empty() && phases.front().links == nullptr;
  };
  auto r = routed_.find(route_key);
  if (r == routed_.end()) {
    r = routed_.emplace(route_key, route(g, algorithm, op, with_links)).first;
  } else if (lacks_links(r->second.phases)) {
    r->second = route(g, algorithm, op, with_links);
  }
  const int chunks = algorithm == CollectiveAlgorithm::tree
                         ? tree_chunks(bytes / static_cast<Bytes>(r->second.tree_local_ranks) / 2)
                         : 1;
  const Key key{g, static_cast<int>(algorithm), static_cast<int>(op), chunks};
  auto it = programs_.find(key);
  if (it != programs_.end() && !lacks_links(it->second.phases)) return it->second;
  PricedProgram priced;
  priced.algorithm = algorithm;
  priced.op = op;
  priced.members = g.size;
  priced.nodes = nodes_spanned(g);
  for (const PricedPhase& routed : r->second.phases) {
    PricedPhase p = routed;
    // The tree's pipeline of `chunks` chunks (collective_program.hpp, tree_pipeline).
    if (p.pipeline == 1) p.bytes_fraction /= chunks;
    if (p.pipeline == 2) {
      if (chunks == 1) continue;
      p.bytes_fraction *= (chunks - 1.0) / chunks;
      p.steps = chunks - 1;
    }
    priced.phases.push_back(std::move(p));
  }
  if (it == programs_.end()) return programs_.emplace(key, std::move(priced)).first->second;
  it->second = std::move(priced);
  return it->second;
}

}  // namespace ws
