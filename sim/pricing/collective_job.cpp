// Job -> communicators -> program (or every step) -> report.
#include "sim/pricing/collective_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <numeric>
#include <utility>

#include "base/input_error.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/pricing/collective_pricing.hpp"
#include "sim/pricing/every_step.hpp"

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

// The every-step reference keeps every send of every step in memory (about 100 bytes each) and
// re-shares the network at each of its events, so its time grows faster than its sends (a
// 1,024-member tree of 1 GiB: 523,776 sends, 37 s): a run above this many sends is refused before
// it runs, and one whose phases promise more before any schedule is built (README "Reliability").
constexpr double kMaxEveryStepSends = 1e6;

// At most one send per member per step of each phase, on each of its ring channels and pipeline
// stages: an upper bound on the sends the every-step schedules hold, from the phased program.
double every_step_sends(const PricedProgram& program, int members, int communicators) {
  double steps = 0;
  for (const PricedPhase& p : program.phases)
    steps += static_cast<double>(p.steps) * std::max(p.channels, 1) * std::max(p.pipeline, 1);
  return steps * members * communicators;
}

// The machine with the requested library first (the models price with the default library) and
// the requested routing.
Machine job_machine(const Machine& machine, const CollectiveJobSpec& spec) {
  Machine m = machine;
  if (!spec.library.empty()) m = with_collective_library(std::move(m), spec.library, {"", 0, "--library"});
  if (spec.routing) m.network.routing = *spec.routing;
  return m;
}

// The job's nodes and devices from --nodes, --devices and --layout, checked against the machine.
struct JobSize {
  int nodes = 0, devices = 0;
  int ranks_per_node = 0;  // 0: full nodes
};
// Jobs are shaped as they are launched (srun -N nodes -n ranks, or --gpus-per-node): --nodes and
// --devices together spread the ranks evenly over the nodes; --ranks-per-node fixes how many.
JobSize job_size(const Machine& machine, const CollectiveJobSpec& spec) {
  const int dpn = machine.node.devices;
  int devices = spec.devices;
  if (spec.layout) {
    if (devices != 0 && devices != spec.layout->devices()) {
      throw flag_error("--devices", std::to_string(devices),
                       fmt::format("the layout's device count {} (or no --devices)", spec.layout->devices()));
    }
    devices = spec.layout->devices();
  }
  int per_node = spec.ranks_per_node;
  if (per_node < 0 || per_node > dpn) {
    throw flag_error("--ranks-per-node", std::to_string(per_node),
                     fmt::format("1 to the {} devices of a {} node", dpn, machine.name));
  }
  int nodes = spec.nodes;
  if (per_node == 0 && nodes > 0 && devices > 0 && devices < static_cast<long long>(nodes) * dpn) {
    if (devices % nodes != 0) {
      throw flag_error("--devices", std::to_string(devices),
                       fmt::format("a multiple of --nodes {} (ranks spread evenly over the nodes), or --ranks-per-node "
                                   "to say how many each node runs",
                                   nodes));
    }
    per_node = devices / nodes;
  }
  const int fill = per_node > 0 ? per_node : dpn;
  if (devices == 0) {
    if (nodes <= 0) throw flag_error("--nodes", std::to_string(nodes), "--nodes N or --devices N (N >= 1)");
    devices = nodes * fill;
  }
  if (nodes == 0) nodes = (devices + fill - 1) / fill;
  if (nodes > machine.nodes) {
    throw flag_error("--nodes", std::to_string(nodes), fmt::format("at most the machine's {} nodes", machine.nodes));
  }
  if (static_cast<long long>(devices) > static_cast<long long>(nodes) * fill || devices < 1) {
    throw flag_error("--devices", std::to_string(devices),
                     per_node > 0 ? fmt::format("1 to nodes x {} ranks per node = {}", fill,
                                                static_cast<long long>(nodes) * fill)
                                  : fmt::format("1 to nodes x {} devices per node = {}", dpn,
                                                static_cast<long long>(nodes) * dpn));
  }
  if (spec.ranks_per_node > 0 && spec.nodes > 0 && devices != spec.nodes * fill) {
    throw flag_error("--devices", std::to_string(devices),
                     fmt::format("--nodes x --ranks-per-node = {} (or leave one of the three out)", spec.nodes * fill));
  }
  return {nodes, devices, per_node};
}

// --algorithm, or the library's choice; refused when it does not do the operation.
CollectiveAlgorithm job_algorithm(JobNetwork& network, const CollectiveLibrary& library,
                                  const GroupGeometry& g, const CollectiveJobSpec& spec) {
  const CollectiveAlgorithm algorithm =
      spec.algorithm.value_or(choose_algorithm(network, library, g, spec.op, spec.bytes));
  if (!supports(algorithm, spec.op)) {
    std::string allowed = "auto";
    for (const auto a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::rhd, CollectiveAlgorithm::tree,
                         CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::binomial}) {
      if (supports(a, spec.op)) allowed += std::string(", ") + to_string(a);
    }
    throw flag_error("--algorithm", to_string(algorithm),
                     fmt::format("an algorithm that does {}: {}", to_string(spec.op), allowed));
  }
  return algorithm;
}

// Rings run one channel per device of a node when every node of the communicator holds the same
// number (> 1) of its members.
int ring_channels(JobNetwork& network, const Machine& machine, const GroupGeometry& g) {
  const int dpn = machine.node.devices;
  const auto first = network.communicators(g).front();
  std::vector<int> per_node(static_cast<std::size_t>(machine.nodes), 0);
  for (const int d : first) ++per_node[static_cast<std::size_t>(d / dpn)];
  const int local = per_node[static_cast<std::size_t>(first.front() / dpn)];
  const bool uniform = std::all_of(first.begin(), first.end(),
                                   [&](int d) { return per_node[static_cast<std::size_t>(d / dpn)] == local; });
  return uniform && local > 1 ? network.schedule_options().channels : 1;
}

// The `top` links that carried the most bytes, most first (ties: lower link id).
std::vector<LinkUsage> busiest_links(const Topology& topology, const std::vector<double>& link_bytes, int top_links) {
  std::vector<int> order(topology.links.size());
  std::iota(order.begin(), order.end(), 0);
  const auto top = std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(0, top_links)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(), [&](int a, int b) {
    const double ba = link_bytes[static_cast<std::size_t>(a)], bb = link_bytes[static_cast<std::size_t>(b)];
    return ba > bb || (ba == bb && a < b);
  });
  std::vector<LinkUsage> busiest;
  for (std::size_t i = 0; i < top; ++i) {
    const int l = order[i];
    const Link& link = topology.links[static_cast<std::size_t>(l)];
    if (link_bytes[static_cast<std::size_t>(l)] <= 0) break;
    busiest.push_back({l, link.kind, vertex_name(topology, link.from), vertex_name(topology, link.to),
                       link_bytes[static_cast<std::size_t>(l)]});
  }
  return busiest;
}

}  // namespace

CollectiveJobReport run_collective_job(const Machine& machine, const CollectiveJobSpec& spec) {
  CollectiveJobReport rep;
  rep.machine = machine.name;
  rep.op = spec.op;
  rep.bytes = spec.bytes;
  rep.model = spec.model;
  if (spec.bytes == 0) throw flag_error("--bytes", "0", "a size > 0 B");
  const JobSize size = job_size(machine, spec);
  rep.nodes = size.nodes;
  rep.devices = size.devices;
  rep.ranks_per_node = std::min(size.devices, size.ranks_per_node > 0 ? size.ranks_per_node : std::max(machine.node.devices, 1));

  const Machine m = job_machine(machine, spec);
  const CollectiveLibrary& library = m.collective_libraries.front();
  rep.library = library.name;
  rep.routing = m.network.routing;
  JobNetwork network(m, size.devices, spec.placement, spec.seed, size.ranks_per_node);
  rep.nodes = network.job_nodes();
  const GroupGeometry g = spec.layout ? geometry(*spec.layout, spec.group) : GroupGeometry{1, size.devices};
  rep.communicators = static_cast<int>(network.communicators(g).size());
  rep.members = g.size;
  rep.algorithm = job_algorithm(network, library, g, spec);
  if (rep.algorithm == CollectiveAlgorithm::ring && g.size > 1) rep.ring_channels = ring_channels(network, machine, g);

  const Bytes h = m.node.nic_efficiency.half_bandwidth_bytes;
  const PricedProgram& program = network.program(g, rep.algorithm, spec.op, spec.bytes, true);
  for (const PricedPhase& p : program.phases)
    rep.phases.push_back({p.steps, p.valiant_share, phase_time(program, p, library, spec.bytes, h)});
  std::vector<double> link_bytes(network.topology().links.size(), 0.0);
  if (spec.model == CollectiveModel::flow)
    throw std::invalid_argument("run_collective_job: the closed form or the every-step reference, not the flow model");
  if (spec.model == CollectiveModel::closed_form) {
    rep.time = program_time(program, library, spec.bytes, h);
    for (const PricedPhase& p : program.phases) {
      const double wire = phase_wire_bytes(p, library, spec.bytes, h);
      for (const LinkShare& s : *p.links) link_bytes[static_cast<std::size_t>(s.link)] += wire * s.weight;
    }
  } else {
    const double sends = every_step_sends(program, g.size, rep.communicators);
    if (sends > kMaxEveryStepSends) {
      throw flag_error("--every-step", fmt::format("about {:.3g} sends", sends),
                       fmt::format("at most {:.0f} million sends for the per-send reference (fewer devices, or the "
                                   "phase model without --every-step)",
                                   kMaxEveryStepSends / 1e6));
    }
    EveryStepResult r = every_step_collective(network, g, rep.algorithm, spec.op, spec.bytes,
                                              static_cast<std::uint64_t>(kMaxEveryStepSends));
    rep.time = r.time;
    rep.flows = r.flows;
    link_bytes = std::move(r.link_bytes);
  }
  const double p = g.size;
  rep.algbw_gbps = rep.time > Time::zero() ? static_cast<double>(spec.bytes) / rep.time.seconds() * 1e-9 : 0.0;
  const double factor = spec.op == CollectiveOp::all_reduce ? 2.0 * (p - 1) / p : (p - 1) / p;
  rep.busbw_gbps = rep.algbw_gbps * factor;
  rep.busiest = busiest_links(network.topology(), link_bytes, spec.top_links);
  return rep;
}

}  // namespace ws
