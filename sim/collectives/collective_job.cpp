// Job -> communicators -> schedules -> one FlowNetwork run -> report.
#include "sim/collectives/collective_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/collectives/ring_schedule.hpp"
#include "sim/core/input_error.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/routing.hpp"

namespace ws {

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::intra_node: return "intra-node";
    case LinkKind::injection: return "NIC injection";
    case LinkKind::endpoint: return "NIC endpoint";
    case LinkKind::local: return "local";
    case LinkKind::global: return "global";
  }
  return "?";
}

namespace {

InputError flag_error(const std::string& flag, const std::string& value, const std::string& expected) {
  return InputError(InputLocation{"", 0, flag}, value, expected);
}

std::string vertex_name(const Topology& t, int v) {
  const TopologyVertex& x = t.graph[static_cast<std::size_t>(v)];
  switch (x.kind) {
    case VertexKind::device: return fmt::format("device {}", x.index);
    case VertexKind::nic: return fmt::format("nic {}", x.index);
    case VertexKind::network_switch: return fmt::format("switch {}", x.index);
  }
  return "?";
}

// Communicators as device lists: the whole job, or every group of one kind of the layout.
std::vector<std::vector<int>> communicators(const CollectiveJobSpec& spec, const std::vector<int>& device_of_rank) {
  std::vector<std::vector<int>> out;
  if (!spec.layout) {
    out.push_back(device_of_rank);
    return out;
  }
  const Layout& l = *spec.layout;
  const int stride = group_stride(l, spec.group), size = group_size(l, spec.group);
  for (int r = 0; r < l.devices(); ++r) {
    if ((r / stride) % size != 0) continue;  // not the group's first member
    std::vector<int> members(static_cast<std::size_t>(size));
    for (int k = 0; k < size; ++k) members[static_cast<std::size_t>(k)] = device_of_rank[static_cast<std::size_t>(r + k * stride)];
    out.push_back(std::move(members));
  }
  return out;
}

}  // namespace

CollectiveJobReport run_collective_job(const Machine& machine, const CollectiveJobSpec& spec) {
  const int dpn = machine.node.devices;
  CollectiveJobReport rep;
  rep.machine = machine.name;
  rep.op = spec.op;
  rep.bytes = spec.bytes;
  if (spec.bytes == 0) throw flag_error("--bytes", "0", "a size > 0 B");

  // Job size.
  int devices = spec.devices;
  if (spec.layout) {
    if (devices != 0 && devices != spec.layout->devices()) {
      throw flag_error("--devices", std::to_string(devices),
                       fmt::format("the layout's device count {} (or no --devices)", spec.layout->devices()));
    }
    devices = spec.layout->devices();
  }
  int nodes = spec.nodes;
  if (devices == 0) {
    if (nodes <= 0) throw flag_error("--nodes", std::to_string(nodes), "--nodes N or --devices N (N >= 1)");
    devices = nodes * dpn;
  }
  if (nodes == 0) nodes = (devices + dpn - 1) / dpn;
  if (nodes > machine.nodes) {
    throw flag_error("--nodes", std::to_string(nodes), fmt::format("at most the machine's {} nodes", machine.nodes));
  }
  if (static_cast<long long>(devices) > static_cast<long long>(nodes) * dpn || devices < 1) {
    throw flag_error("--devices", std::to_string(devices),
                     fmt::format("1 to nodes x {} devices per node = {}", dpn, static_cast<long long>(nodes) * dpn));
  }
  rep.nodes = nodes;
  rep.devices = devices;

  // Library and algorithm.
  const CollectiveLibrary* library = &machine.collective_libraries.front();
  if (!spec.library.empty()) {
    const auto it = std::find_if(machine.collective_libraries.begin(), machine.collective_libraries.end(),
                                 [&](const CollectiveLibrary& l) { return l.name == spec.library; });
    if (it == machine.collective_libraries.end()) {
      std::string names;
      for (const auto& l : machine.collective_libraries) names += (names.empty() ? "" : ", ") + l.name;
      throw flag_error("--library", spec.library, fmt::format("one of the machine's libraries: {}", names));
    }
    library = &*it;
  }
  rep.library = library->name;

  const std::vector<int> job_nodes = place_job_nodes(machine.nodes, nodes, spec.placement, spec.seed);
  const std::vector<int> device_of_rank = devices_of_ranks(job_nodes, dpn, devices);
  const auto comms = communicators(spec, device_of_rank);
  const int p = static_cast<int>(comms.front().size());
  rep.communicators = static_cast<int>(comms.size());
  rep.members = p;
  std::vector<int> node_ids;
  for (const int d : comms.front()) node_ids.push_back(d / dpn);
  std::sort(node_ids.begin(), node_ids.end());
  const int comm_nodes = static_cast<int>(std::unique(node_ids.begin(), node_ids.end()) - node_ids.begin());
  rep.algorithm = spec.algorithm.value_or(select_algorithm(*library, spec.op, spec.bytes, p, comm_nodes));
  if (!supports(rep.algorithm, spec.op)) {
    std::string allowed = "auto";
    for (const auto a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::rhd, CollectiveAlgorithm::tree,
                         CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::binomial}) {
      if (supports(a, spec.op)) allowed += std::string(", ") + to_string(a);
    }
    throw flag_error("--algorithm", to_string(rep.algorithm),
                     fmt::format("an algorithm that does {}: {}", to_string(spec.op), allowed));
  }

  // Network: the nodes up to the highest one used; all groups when routes may leave minimal paths.
  rep.routing = spec.routing.value_or(machine.network.routing);
  const int built_nodes = job_nodes.back() + 1;
  const Topology topology =
      build_topology(machine, built_nodes, rep.routing == RoutingPolicy::minimal ? 0 : machine.network.groups);
  RouterOptions route_options{rep.routing, spec.seed};
  route_options.non_minimal_bias = spec.non_minimal_bias;
  Router router(topology, route_options);
  FlowNetwork network(topology, router);

  ScheduleOptions options;
  options.devices_per_node = dpn;
  options.channels = std::max(1, static_cast<int>(machine.node.nics.size()));
  options.node_order = intra_node_ring_order(machine.node);
  const auto by_node = members_by_node(comms.front(), dpn);
  const bool uniform = std::all_of(by_node.begin(), by_node.end(),
                                   [&](const auto& n) { return n.size() == by_node.front().size(); });
  rep.ring_channels =
      rep.algorithm == CollectiveAlgorithm::ring && uniform && by_node.front().size() > 1 ? options.channels : 1;
  // One send per ring step: about channels x p x 2p sends per communicator (all-reduce).
  const double per_step_sends = static_cast<double>(comms.size()) * rep.ring_channels * p *
                                (spec.op == CollectiveOp::all_reduce ? 2.0 : 1.0) * (p - 1);
  if (spec.max_flows > 0 && (rep.algorithm == CollectiveAlgorithm::ring || rep.algorithm == CollectiveAlgorithm::hierarchical) &&
      per_step_sends > static_cast<double>(spec.max_flows)) {
    const double per_segment = static_cast<double>(comms.size()) * rep.ring_channels * p;
    options.max_segments = std::max(4, static_cast<int>(static_cast<double>(spec.max_flows) / per_segment));
    rep.max_segments = options.max_segments;
  }

  std::vector<FlowSchedule> schedules;
  schedules.reserve(comms.size());
  for (const auto& members : comms) {
    schedules.push_back(build_schedule(rep.algorithm, spec.op, members, spec.bytes, options));
    schedules.back().start = Time::zero();
  }
  const auto results = run_flow_schedules(network, schedules, *library, wire_model(machine, *library));
  Time end = Time::zero();
  for (const auto& r : results) {
    end = max(end, r.end);
    rep.flows += r.flows;
    rep.bytes_sent += r.bytes;
  }
  rep.time = end;
  rep.algbw_gbps = static_cast<double>(spec.bytes) / end.seconds() * 1e-9;
  const double factor = spec.op == CollectiveOp::all_reduce ? 2.0 * (p - 1) / p : static_cast<double>(p - 1) / p;
  rep.busbw_gbps = rep.algbw_gbps * factor;
  rep.minimal_routes = router.minimal_routes();
  rep.non_minimal_routes = router.non_minimal_routes();

  std::vector<int> order(topology.links.size());
  std::iota(order.begin(), order.end(), 0);
  const auto top = std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(0, spec.top_links)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(), [&](int a, int b) {
    const double ba = network.link_bytes_delivered(a), bb = network.link_bytes_delivered(b);
    return ba > bb || (ba == bb && a < b);
  });
  for (std::size_t i = 0; i < top; ++i) {
    const int l = order[i];
    const Link& link = topology.links[static_cast<std::size_t>(l)];
    if (network.link_bytes_delivered(l) <= 0) break;
    rep.busiest.push_back({l, link.kind, vertex_name(topology, link.from), vertex_name(topology, link.to),
                           network.link_bytes_delivered(l)});
  }
  return rep;
}

}  // namespace ws
