// Reads machines/*.yaml into a Machine and rejects anything inconsistent with an InputError that
// names file, line, dotted key, the offending value and what was expected. Schema: machines/SCHEMA.md.
#include "sim/machine/machine_loader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/input_error.hpp"
#include "base/quantity.hpp"
#include "sim/machine/yaml_fields.hpp"
#include "base/input_file.hpp"

namespace ws {
namespace {

using namespace yaml_fields;

// Limits of a machine file (README "Reliability"), far above any machine described so far and low
// enough that the tables built from them fit in memory: intra-node tables grow with devices per
// node squared, local links with switches per group squared, global links with groups squared.
constexpr int kMaxDevicesPerNode = 1024;
constexpr int kMaxGroups = 1024;
constexpr int kMaxSwitchesPerGroup = 256;
constexpr int kMaxNodesPerGroup = 4096;
constexpr int kMaxPortsPerSwitch = 1024;
constexpr std::size_t kMaxGemmSamples = 20000;
constexpr std::size_t kMaxListEntries = 100000;  // intra-node links (all pairs of 1,024 devices: 523,776 is refused)

GemmEfficiencySample read_gemm_sample(const Field& f) {
  const MapField map(f, {"m", "n", "k", "efficiency"});
  GemmEfficiencySample s;
  s.m = read_positive_number(map.required("m"));
  s.n = read_positive_number(map.required("n"));
  s.k = read_positive_number(map.required("k"));
  s.efficiency = read_efficiency(map.required("efficiency"));
  return s;
}

std::vector<std::string> kernel_names() {
  return {kElementwiseKernelNames.begin(), kElementwiseKernelNames.end()};
}

DeviceSpec read_device(const Field& f) {
  const MapField map(f, {"name", "peak", "memory", "gemm_efficiency", "elementwise_throughput", "busy_node_compute",
                         "fused_attention"});
  DeviceSpec d;
  d.name = read_string(map.required("name"));
  const MapField peak(map.required("peak"), {"bf16", "fp16", "fp32"});
  d.peak_bf16 = read_flop_rate(peak.required("bf16"));
  d.peak_fp16 = read_flop_rate(peak.required("fp16"));
  d.peak_fp32 = read_flop_rate(peak.required("fp32"));
  const MapField memory(map.required("memory"), {"capacity", "bandwidth"});
  d.memory_capacity_bytes = read_capacity(memory.required("capacity"));
  d.memory_bandwidth = read_bandwidth(memory.required("bandwidth"));
  std::vector<GemmEfficiencySample> samples;
  // One efficiency per shape: a shape given twice with two efficiencies would make the table's
  // answer depend on which the interpolation happens to read.
  std::map<std::tuple<double, double, double>, std::size_t> seen;
  const Field table = map.required("gemm_efficiency");
  for (const Field& sample : read_list(table, "{m, n, k, efficiency} samples", true, kMaxGemmSamples)) {
    const GemmEfficiencySample s = read_gemm_sample(sample);
    const auto [it, inserted] = seen.emplace(std::tuple{s.m, s.n, s.k}, samples.size());
    if (!inserted) {
      sample.fail(fmt::format("m {} n {} k {}", s.m, s.n, s.k),
                  fmt::format("each GEMM shape once (already in {}[{}])", table.key, it->second));
    }
    samples.push_back(s);
  }
  d.gemm = make_gemm_table(std::move(samples));
  if (map.has("busy_node_compute")) d.busy_node_compute = read_efficiency(map.required("busy_node_compute"));
  if (map.has("fused_attention")) {
    const MapField fused(map.required("fused_attention"), {"forward_efficiency", "backward_efficiency"});
    d.fused_attention = FusedAttention{read_efficiency(fused.required("forward_efficiency")),
                                       read_efficiency(fused.required("backward_efficiency"))};
  }
  if (map.has("elementwise_throughput")) {
    const Field throughput = map.required("elementwise_throughput");
    if (!throughput.node.IsMap() || throughput.node.size() == 0)
      throughput.fail(fmt::format("a map of elements per second by kernel: {}", join(kernel_names())));
    for (const auto& entry : throughput.node) {
      const std::string name = entry.first.Scalar();
      const Field value = throughput.child(entry.second, name, line_of(entry.first));
      const auto kernel = parse_elementwise_kernel(name);
      const Field key = throughput.child(entry.first, name, line_of(entry.first));
      if (!kernel) key.fail(name, fmt::format("one of the keys: {}", join(kernel_names())));
      if (d.elementwise.of(*kernel) > 0) key.fail(name, "each key at most once");
      d.elementwise.of(*kernel) = read_positive_number(value);
    }
  }
  return d;
}

int read_device_index(const Field& f, int devices) {
  const long long value = read_integer(f);
  if (value < 0 || value >= devices) f.fail(fmt::format("a device index in [0, {}] (node.devices = {})", devices - 1, devices));
  return static_cast<int>(value);
}

IntraNodeLink read_link(const Field& f, int devices) {
  const MapField map(f, {"between", "bandwidth", "latency"});
  const Field between = map.required("between");
  if (!between.node.IsSequence() || between.node.size() != 2) between.fail("a list of two device indices, e.g. [0, 1]");
  IntraNodeLink link;
  link.device_a = read_device_index(between.element(between.node[0], 0), devices);
  link.device_b = read_device_index(between.element(between.node[1], 1), devices);
  if (link.device_a == link.device_b) {
    between.fail(fmt::format("[{}, {}]", link.device_a, link.device_b), "two different devices (no self-links)");
  }
  link.bandwidth = read_bandwidth(map.required("bandwidth"));
  link.latency = read_latency(map.required("latency"));
  return link;
}

std::vector<IntraNodeLink> expand_all_to_all(const Field& f, int devices) {
  const MapField map(f, {"bandwidth", "latency"});
  const Bandwidth bandwidth = read_bandwidth(map.required("bandwidth"));
  const Time latency = read_latency(map.required("latency"));
  std::vector<IntraNodeLink> links;
  for (int a = 0; a < devices; ++a) {
    for (int b = a + 1; b < devices; ++b) links.push_back(IntraNodeLink{a, b, bandwidth, latency});
  }
  return links;
}

// Every device must reach every other one inside the node, or intra-node collectives have no path.
void check_connected(const Field& links_field, const std::vector<IntraNodeLink>& links, int devices) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Graph graph(static_cast<std::size_t>(devices));
  for (const auto& link : links) {
    boost::add_edge(static_cast<std::size_t>(link.device_a), static_cast<std::size_t>(link.device_b), graph);
  }
  std::vector<int> component(static_cast<std::size_t>(devices));
  const int count = boost::connected_components(graph, component.data());
  if (count <= 1) return;
  std::map<int, std::vector<std::string>> members;
  for (int d = 0; d < devices; ++d) members[component[static_cast<std::size_t>(d)]].push_back(std::to_string(d));
  std::string parts;
  for (const auto& [id, list] : members) parts += fmt::format("{}{{{}}}", parts.empty() ? "" : " ", join(list));
  links_field.fail(fmt::format("{} separate groups of devices: {}", count, parts),
                   fmt::format("links that connect all {} devices of the node", devices));
}

NodeSpec read_node(const Field& f) {
  const MapField map(f, {"devices", "links", "all_to_all", "nics", "nic_efficiency"});
  NodeSpec node;
  node.devices = read_int_in(map.required("devices"), 1, kMaxDevicesPerNode, "(the limit for one node)");

  if (map.has("links") && map.has("all_to_all")) {
    map.required("all_to_all").fail("a map", "either 'links' or 'all_to_all', not both");
  }
  if (map.has("all_to_all")) {
    node.links = expand_all_to_all(map.required("all_to_all"), node.devices);
  } else if (map.has("links")) {
    const Field links_field = map.required("links");
    std::map<std::pair<int, int>, std::size_t> seen;
    for (const Field& entry : read_list(links_field, "{between, bandwidth, latency} links", false, kMaxListEntries)) {
      const IntraNodeLink link = read_link(entry, node.devices);
      const auto pair = std::minmax(link.device_a, link.device_b);
      const std::size_t index = node.links.size();
      const auto [it, inserted] = seen.emplace(pair, index);
      if (!inserted) {
        MapField(entry, {"between", "bandwidth", "latency"}).required("between").fail(
            fmt::format("[{}, {}]", link.device_a, link.device_b),
            fmt::format("each device pair at most once (already in {}[{}]); write parallel links as one "
                        "entry with their summed bandwidth", links_field.key, it->second));
      }
      node.links.push_back(link);
    }
  } else if (node.devices > 1) {
    map.field().child(map.field().node, "links", map.field().line)
        .fail("", "required key 'links' or 'all_to_all' (missing) when node.devices > 1");
  }
  if (node.devices > 1) {
    const Field where = map.has("links") ? map.required("links") : map.required("all_to_all");
    check_connected(where, node.links, node.devices);
  }

  for (const Field& entry : read_list(map.required("nics"), "{device, bandwidth, latency} NICs", true)) {
    const MapField nic(entry, {"device", "bandwidth", "latency"});
    node.nics.push_back(Nic{read_device_index(nic.required("device"), node.devices),
                            read_bandwidth(nic.required("bandwidth")), read_latency(nic.required("latency"))});
  }

  if (map.has("nic_efficiency")) {
    const MapField eff(map.required("nic_efficiency"), {"large_message", "half_bandwidth_size"});
    node.nic_efficiency.large_message_efficiency = read_efficiency(eff.required("large_message"));
    node.nic_efficiency.half_bandwidth_bytes = read_size_non_negative(eff.required("half_bandwidth_size"));
  }
  return node;
}

// One of an enum's values, spelled as its to_string spells it; the error lists them all.
template <class Enum>
Enum read_choice(const Field& f, std::initializer_list<Enum> choices) {
  std::string what = "one of: ";
  for (const Enum c : choices) what += std::string(c == *choices.begin() ? "" : ", ") + to_string(c);
  const std::string s = scalar(f, what);
  for (const Enum c : choices) {
    if (s == to_string(c)) return c;
  }
  f.fail(what);
}

RoutingPolicy read_routing(const Field& f) {
  return read_choice(f, {RoutingPolicy::minimal, RoutingPolicy::non_minimal, RoutingPolicy::adaptive});
}

CollectiveProgress read_progress(const Field& f) {
  return read_choice(f, {CollectiveProgress::asynchronous, CollectiveProgress::host});
}

StepOverlap read_step_overlap(const Field& f) {
  return read_choice(f, {StepOverlap::serial, StepOverlap::pipelined});
}

std::pair<Bandwidth, Time> read_link_class(const Field& f) {
  const MapField map(f, {"bandwidth", "latency"});
  return {read_bandwidth(map.required("bandwidth")), read_latency(map.required("latency"))};
}

// Port and wiring budgets of a dragonfly; each violated budget is reported on the key to change.
void check_dragonfly(const MapField& map, const DragonflySpec& net, int nics_per_node) {
  const int local_ports = net.switches_per_group - 1;
  const long long used = static_cast<long long>(net.endpoints_per_switch) + local_ports + net.global_ports_per_switch;
  if (used > net.ports_per_switch) {
    map.required("ports_per_switch").fail(
        fmt::format("at least endpoints_per_switch + (switches_per_group - 1) local + global_ports_per_switch = "
                    "{} + {} + {} = {} ports",
                    net.endpoints_per_switch, local_ports, net.global_ports_per_switch, used));
  }
  const long long endpoints_needed = static_cast<long long>(net.nodes_per_group) * nics_per_node;
  const long long endpoints_available = static_cast<long long>(net.switches_per_group) * net.endpoints_per_switch;
  if (endpoints_needed > endpoints_available) {
    map.required("nodes_per_group").fail(
        fmt::format("{} ({} NICs per node = {} endpoints)", net.nodes_per_group, nics_per_node, endpoints_needed),
        fmt::format("nodes_per_group * NICs per node <= switches_per_group * endpoints_per_switch = {} * {} = {}",
                    net.switches_per_group, net.endpoints_per_switch, endpoints_available));
  }
  if (net.nodes_per_switch > 0) {
    const long long blocks = (static_cast<long long>(net.nodes_per_group) + net.nodes_per_switch - 1) / net.nodes_per_switch;
    if (net.nodes_per_switch > net.endpoints_per_switch) {
      map.required("nodes_per_switch").fail(fmt::format("at most endpoints_per_switch = {} (each of a block's nodes "
                                                        "takes one endpoint port on each of its switches)",
                                                        net.endpoints_per_switch));
    }
    if (blocks * nics_per_node > net.switches_per_group) {
      map.required("nodes_per_switch").fail(
          fmt::format("ceil(nodes_per_group / nodes_per_switch) * NICs per node <= switches_per_group = {} (here {} "
                      "blocks of {} switches)",
                      net.switches_per_group, blocks, nics_per_node));
    }
  }
  if (net.groups > 1 && net.global_links_per_group_pair < 1) {
    map.required("global_links_per_group_pair").fail("an integer >= 1 when groups > 1");
  }
  const long long global_needed = static_cast<long long>(net.global_links_per_group_pair) * (net.groups - 1);
  const long long global_available = static_cast<long long>(net.switches_per_group) * net.global_ports_per_switch;
  if (global_needed > global_available) {
    map.required("global_links_per_group_pair").fail(
        fmt::format("{} (x (groups - 1) = {} global links per group)", net.global_links_per_group_pair, global_needed),
        fmt::format("global_links_per_group_pair * (groups - 1) <= switches_per_group * global_ports_per_switch = "
                    "{} * {} = {}",
                    net.switches_per_group, net.global_ports_per_switch, global_available));
  }
}

DragonflySpec read_network(const Field& f, int nics_per_node) {
  const MapField map(f, {"topology", "groups", "switches_per_group", "ports_per_switch", "endpoints_per_switch",
                         "global_ports_per_switch", "global_links_per_group_pair", "nodes_per_group", "nodes_per_switch",
                         "links", "switch_latency", "routing", "background_load"});
  const Field topology = map.required("topology");
  if (scalar(topology, "one of: dragonfly") != "dragonfly") topology.fail("one of: dragonfly");

  DragonflySpec net;
  net.groups = read_int_in(map.required("groups"), 1, kMaxGroups, "(the limit for one machine)");
  net.switches_per_group = read_int_in(map.required("switches_per_group"), 1, kMaxSwitchesPerGroup, "(the limit for one group)");
  net.ports_per_switch = read_int_in(map.required("ports_per_switch"), 1, kMaxPortsPerSwitch, "(the limit for one switch)");
  net.endpoints_per_switch = read_int_in(map.required("endpoints_per_switch"), 1, kMaxPortsPerSwitch, "(the limit for one switch)");
  net.global_ports_per_switch = read_int_in(map.required("global_ports_per_switch"), 0, kMaxPortsPerSwitch, "(the limit for one switch)");
  net.global_links_per_group_pair =
      read_int_in(map.required("global_links_per_group_pair"), 0, kMaxPortsPerSwitch, "(the limit for one switch)");
  net.nodes_per_group = read_int_in(map.required("nodes_per_group"), 1, kMaxNodesPerGroup, "(the limit for one group)");
  if (map.has("nodes_per_switch"))
    net.nodes_per_switch = read_int_in(map.required("nodes_per_switch"), 1, kMaxPortsPerSwitch, "(the limit for one switch)");

  const MapField links(map.required("links"), {"endpoint", "local", "global"});
  std::tie(net.endpoint_link_bandwidth, net.endpoint_link_latency) = read_link_class(links.required("endpoint"));
  std::tie(net.local_link_bandwidth, net.local_link_latency) = read_link_class(links.required("local"));
  std::tie(net.global_link_bandwidth, net.global_link_latency) = read_link_class(links.required("global"));
  net.switch_latency = read_latency(map.required("switch_latency"));
  net.routing = read_routing(map.required("routing"));
  if (map.has("background_load")) net.background_load = read_fraction(map.required("background_load"));

  check_dragonfly(map, net, nics_per_node);
  return net;
}

CollectiveOp read_op(const Field& f) {
  constexpr const char* kWhat = "one of: all-reduce, reduce-scatter, all-gather";
  const std::string s = scalar(f, kWhat);
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    if (s == to_string(op)) return op;
  }
  f.fail(kWhat);
}

LargeJobOverhead read_large_job_overhead(const Field& f) {
  const MapField map(f, {"ops", "points"});
  LargeJobOverhead o;
  for (const Field& op : read_list(map.required("ops"), "collective ops", true)) o.ops.push_back(read_op(op));
  for (const Field& point : read_list(map.required("points"), "{nodes, per_step, message} points", true)) {
    const MapField pm(point, {"nodes", "per_step", "message"});
    const Field nodes = pm.required("nodes");
    LargeJobOverheadPoint p{read_int_at_least(nodes, 1), read_latency(pm.required("per_step")),
                            read_capacity(pm.required("message"))};
    if (!o.points.empty() && p.nodes <= o.points.back().nodes) nodes.fail("node counts increasing from one point to the next");
    o.points.push_back(p);
  }
  return o;
}

MeasuredHost read_measured_host(const Field& f) {
  const MapField map(f, {"hostname", "machine_id", "boot_id", "cpu_model", "cores"});
  MeasuredHost h;
  h.hostname = scalar(map.required("hostname"), "a string");
  if (map.has("machine_id")) h.machine_id = scalar(map.required("machine_id"), "a string");
  h.boot_id = scalar(map.required("boot_id"), "a string");
  if (map.has("cpu_model")) h.cpu_model = scalar(map.required("cpu_model"), "a string");
  h.cores = read_int_in(map.required("cores"), 1, 1 << 20, "(the host's online cores)");
  return h;
}

Variability read_variability(const Field& f) {
  const MapField map(f, {"device_speed_spread", "compute_noise", "collective_entry_jitter"});
  Variability v;
  if (map.has("device_speed_spread")) v.device_speed_spread = read_fraction(map.required("device_speed_spread"));
  if (map.has("compute_noise")) v.compute_noise = read_fraction(map.required("compute_noise"));
  if (map.has("collective_entry_jitter")) v.collective_entry_jitter = read_latency(map.required("collective_entry_jitter"));
  return v;
}

std::vector<CollectiveLibrary> read_collectives(const Field& f) {
  std::vector<CollectiveLibrary> out;
  for (const Field& entry : read_list(f, "{name, launch_latency, step_latency, bandwidth_efficiency} libraries", true)) {
    const MapField map(entry, {"name", "launch_latency", "step_latency", "bandwidth_efficiency", "tree_threshold",
                               "progress", "setup_latency_per_member", "large_job_overhead", "low_latency",
                               "ll128", "step_overlap", "eager_overflow", "compute_slowdown"});
    CollectiveLibrary lib;
    const Field name = map.required("name");
    lib.name = read_string(name);
    for (const auto& earlier : out) {
      if (earlier.name == lib.name) name.fail("a library name not used by an earlier entry");
    }
    lib.launch_latency = read_latency(map.required("launch_latency"));
    lib.step_latency = read_latency(map.required("step_latency"));
    lib.bandwidth_efficiency = read_efficiency(map.required("bandwidth_efficiency"));
    if (map.has("tree_threshold")) {
      for (const Field& point : read_list(map.required("tree_threshold"), "{nodes, size} points", true)) {
        const MapField pm(point, {"nodes", "size"});
        const Field nodes = pm.required("nodes");
        TreeThreshold t{read_int_at_least(nodes, 1), read_size_non_negative(pm.required("size"))};
        if (!lib.tree_thresholds.empty() && t.nodes <= lib.tree_thresholds.back().nodes) {
          nodes.fail("node counts increasing from one point to the next");
        }
        lib.tree_thresholds.push_back(t);
      }
    }
    if (map.has("progress")) lib.progress = read_progress(map.required("progress"));
    if (map.has("compute_slowdown")) lib.compute_slowdown = read_fraction(map.required("compute_slowdown"));
    if (map.has("step_overlap")) lib.step_overlap = read_step_overlap(map.required("step_overlap"));
    if (map.has("eager_overflow")) {
      const MapField e(map.required("eager_overflow"), {"above", "up_to", "per_step"});
      EagerOverflow window{read_size_non_negative(e.required("above")), read_capacity(e.required("up_to")),
                           read_latency(e.required("per_step"))};
      if (window.up_to <= window.above) e.required("up_to").fail("a size larger than 'above'");
      lib.eager_overflow = window;
    }
    if (map.has("setup_latency_per_member"))
      lib.setup_latency_per_member = read_latency(map.required("setup_latency_per_member"));
    if (map.has("large_job_overhead")) lib.large_job_overhead = read_large_job_overhead(map.required("large_job_overhead"));
    for (const auto& [key, protocol] : kProtocolKeys) {
      if (!map.has(key)) continue;
      const MapField terms(map.required(key), {"step_latency", "bandwidth_efficiency", "bytes_per_channel"});
      lib.protocols.push_back(ProtocolTerms{protocol, read_latency(terms.required("step_latency")),
                                            read_efficiency(terms.required("bandwidth_efficiency")),
                                            terms.has("bytes_per_channel")
                                                ? read_capacity(terms.required("bytes_per_channel"))
                                                : Bytes{0}});
    }
    out.push_back(lib);
  }
  return out;
}

constexpr UncertainParameter kUncertainParameters[] = {
    UncertainParameter::gemm_efficiency_scale, UncertainParameter::collective_step_latency,
    UncertainParameter::collective_bandwidth_efficiency, UncertainParameter::global_links_per_group_pair,
    UncertainParameter::switch_latency,        UncertainParameter::background_load,
    UncertainParameter::device_speed_spread,   UncertainParameter::compute_slowdown,
    UncertainParameter::attention_efficiency_scale, UncertainParameter::gemm_shape_falloff,
    UncertainParameter::collective_eager_overflow};

// The parameter called `text`, or a failure at `name` listing the names.
UncertainParameter read_parameter_name(const Field& name, const std::string& text, const Machine& m) {
  std::vector<std::string> names;
  for (const auto p : kUncertainParameters) names.emplace_back(to_string(p));
  const auto* known = std::find_if(std::begin(kUncertainParameters), std::end(kUncertainParameters),
                                   [&](UncertainParameter p) { return text == to_string(p); });
  if (known == std::end(kUncertainParameters)) name.fail(text, fmt::format("one of: {}", join(names)));
  if (*known == UncertainParameter::attention_efficiency_scale && !m.device.fused_attention)
    name.fail(text, "a parameter of this machine: attention_efficiency_scale needs device.fused_attention");
  return *known;
}

// One value of a parameter (an end of a range, or a setting), checked as the parameter's kind
// requires; `number` or `time` is set.
struct ParameterReading {
  double number = 0;
  Time time;
};
ParameterReading read_parameter_value(const Field& f, UncertainParameter p, const Machine& m) {
  ParameterReading v;
  switch (p) {
    case UncertainParameter::collective_step_latency:
    case UncertainParameter::collective_eager_overflow:
    case UncertainParameter::switch_latency: v.time = read_latency(f); break;
    case UncertainParameter::gemm_efficiency_scale:
    case UncertainParameter::attention_efficiency_scale:
    case UncertainParameter::gemm_shape_falloff: v.number = read_positive_number(f); break;
    case UncertainParameter::collective_bandwidth_efficiency: v.number = read_efficiency(f); break;
    case UncertainParameter::background_load:
    case UncertainParameter::device_speed_spread:
    case UncertainParameter::compute_slowdown: v.number = read_fraction(f); break;
    case UncertainParameter::global_links_per_group_pair: {
      v.number = read_int_at_least(f, 1);
      const long long most = m.network.groups > 1 ? static_cast<long long>(m.network.switches_per_group) *
                                                        m.network.global_ports_per_switch / (m.network.groups - 1)
                                                  : std::numeric_limits<int>::max();
      if (v.number > static_cast<double>(most)) {
        f.fail(fmt::format("at most switches_per_group * global_ports_per_switch / (groups - 1) = {}", most));
      }
      break;
    }
  }
  return v;
}

// The value the rest of the file gives the range's term (1 for the two scales and the falloff), as
// the file would write it, and whether [low, high] holds it.
bool range_holds_nominal(const UncertaintyRange& r, const Machine& m, std::string& nominal) {
  // A copy: ranged_term hands out the terms to write, this only reads them.
  CollectiveLibrary library = is_collective_term(r.parameter) ? *ranged_library(m, r) : CollectiveLibrary{};
  const CollectiveTerm term = is_collective_term(r.parameter) ? ranged_term(library, r) : CollectiveTerm{};
  if (is_latency(r.parameter)) {
    const Time n = term.time ? *term.time : m.network.switch_latency;
    nominal = fmt::format("{} ns", n.ns());
    return r.low_time <= n && n <= r.high_time;
  }
  double n = term.number ? *term.number : 1.0;
  switch (r.parameter) {
    case UncertainParameter::background_load: n = m.network.background_load; break;
    case UncertainParameter::device_speed_spread: n = m.variability.device_speed_spread; break;
    case UncertainParameter::global_links_per_group_pair: n = m.network.global_links_per_group_pair; break;
    default: break;
  }
  nominal = fmt::format("{}", n);
  return r.low <= n && n <= r.high;
}

// A collective range's term exists in `library` (an eager window is optional), or a failure at
// `name` saying which key the library lacks.
void require_ranged_term(const Field& name, const UncertaintyRange& r, const CollectiveLibrary& library) {
  CollectiveLibrary copy = library;  // ranged_term hands out the terms to write, this only reads them
  const CollectiveTerm term = ranged_term(copy, r);
  if (term.time || term.number) return;
  name.fail(to_string(r.parameter), fmt::format("a parameter of this library: {} has no eager_overflow", library.name));
}

// The optional `library:` and `protocol:` of a range: which collective library (and which of its
// protocols) the range moves. Checked against the file's collectives, read before.
void read_range_target(const MapField& map, const Field& name, UncertaintyRange& r, const Machine& m) {
  if (m.collective_libraries.empty()) return;
  const bool collective = is_collective_term(r.parameter);
  if (map.has("library")) {
    const Field f = map.required("library");
    const std::string library = scalar(f, "a collective library name");
    if (!collective) {
      f.fail(library, fmt::format("no library: key ({} is not a collective library's term; library: goes with "
                                  "collective_step_latency, collective_bandwidth_efficiency, compute_slowdown, "
                                  "collective_eager_overflow)",
                                  to_string(r.parameter)));
    }
    r.library = library;
    r.library_written = true;
    if (!ranged_library(m, r)) f.fail(library, fmt::format("one of the file's collectives: {}", collective_library_names(m)));
  } else if (collective) {
    r.library = m.collective_libraries.front().name;
  }
  if (map.has("protocol")) {
    const Field f = map.required("protocol");
    const std::string key = scalar(f, "low_latency or ll128");
    if (r.parameter != UncertainParameter::collective_step_latency &&
        r.parameter != UncertainParameter::collective_bandwidth_efficiency) {
      f.fail(key, "no protocol: key (a protocol has a step latency and a bandwidth efficiency only)");
    }
    r.protocol = protocol_name_of_key(key);
    if (r.protocol.empty()) f.fail(key, "low_latency or ll128");
    if (!ranged_protocol(*ranged_library(m, r), r))
      f.fail(key, fmt::format("a protocol block ({}:) of the collectives entry {}", key, r.library));
  }
  if (collective) require_ranged_term(name, r, *ranged_library(m, r));
}

// `uncertainty:` entries {parameter, low, high, source, spans}: low <= nominal <= high, where nominal is
// the value the rest of the file gives (1 for the two scales and the falloff), so that a range always
// brackets the study's own answer. Read after the network and collectives it refers to.
std::vector<UncertaintyRange> read_uncertainty(const Field& f, const Machine& m) {
  std::vector<UncertaintyRange> out;
  for (const Field& entry : read_list(f, "{parameter, low, high, source, spans, library, protocol} ranges", false)) {
    const MapField map(entry, {"parameter", "low", "high", "source", "spans", "library", "protocol"});
    const Field name = map.required("parameter");
    UncertaintyRange r;
    r.parameter = read_parameter_name(name, scalar(name, "a parameter name"), m);
    read_range_target(map, name, r, m);
    for (const auto& earlier : out) {
      if (earlier.parameter == r.parameter && earlier.library == r.library && earlier.protocol == r.protocol)
        name.fail("a parameter (with its library and protocol) not given by an earlier entry");
    }
    const Field low = map.required("low"), high = map.required("high");
    const ParameterReading lo = read_parameter_value(low, r.parameter, m);
    const ParameterReading hi = read_parameter_value(high, r.parameter, m);
    r.low = lo.number;
    r.high = hi.number;
    r.low_time = lo.time;
    r.high_time = hi.time;
    if (is_latency(r.parameter) ? r.high_time < r.low_time : r.high < r.low) high.fail("a value >= low");
    std::string nominal;
    if (!range_holds_nominal(r, m, nominal)) {
      high.fail(fmt::format("[{}, {}]", scalar(low, ""), scalar(high, "")),
                fmt::format("a range that contains the machine's own value {}", nominal));
    }
    r.source = read_string(map.required("source"));
    // Required: a reader of the study's band has to know whether the written value is its top.
    const Field spans = map.required("spans");
    const std::string span = scalar(spans, "best_to_typical or error");
    if (span == "best_to_typical")
      r.spans = RangeSpan::best_to_typical;
    else if (span == "error")
      r.spans = RangeSpan::error;
    else
      spans.fail("best_to_typical (the file's value is the best case a run sees) or error (a central estimate)");
    out.push_back(std::move(r));
  }
  return out;
}

YAML::Node parse_yaml(const std::string& yaml_text, const std::string& file) {
  try {
    return YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    throw InputError(InputLocation{file, line, ""}, "", fmt::format("valid YAML ({})", e.msg));
  }
}

}  // namespace

Machine parse_machine(const std::string& yaml_text, const std::string& file) {
  const YAML::Node document = parse_yaml(yaml_text, file);
  const Field root{&file, document, "", line_of(document)};
  const MapField map(root, {"name", "description", "nodes", "device", "node", "network", "collectives",
                             "variability", "uncertainty", "measured_on"});
  Machine m;
  m.name = read_string(map.required("name"));
  if (map.has("description")) m.description = scalar(map.required("description"), "a string");
  m.source_file = file;
  m.device = read_device(map.required("device"));
  m.node = read_node(map.required("node"));
  const Field nodes = map.required("nodes");
  m.nodes = read_int_at_least(nodes, 1);
  m.network = read_network(map.required("network"), static_cast<int>(m.node.nics.size()));
  const long long capacity = static_cast<long long>(m.network.groups) * m.network.nodes_per_group;
  if (m.nodes > capacity) {
    nodes.fail(fmt::format("nodes <= network.groups * network.nodes_per_group = {} * {} = {}", m.network.groups,
                           m.network.nodes_per_group, capacity));
  }
  m.collective_libraries = read_collectives(map.required("collectives"));
  if (map.has("variability")) m.variability = read_variability(map.required("variability"));
  if (map.has("uncertainty")) m.uncertainty = read_uncertainty(map.required("uncertainty"), m);
  if (map.has("measured_on")) m.measured_on = read_measured_host(map.required("measured_on"));
  return m;
}

Machine load_machine(const std::string& path) {
  return parse_machine(read_input_file(path, "a readable machine file (YAML)", kMaxMachineFileBytes), path);
}

std::filesystem::path machine_file_path(std::string_view name_or_path, const std::string& machines_dir) {
  const std::string text(name_or_path);
  const std::filesystem::path as_path(text);
  if (as_path.has_parent_path() || as_path.extension() == ".yaml") return as_path;

  const std::filesystem::path candidate = std::filesystem::path(machines_dir) / (text + ".yaml");
  std::error_code ec;
  if (std::filesystem::is_regular_file(candidate, ec)) return candidate;

  std::vector<std::string> known;
  for (const auto& entry : std::filesystem::directory_iterator(machines_dir, ec)) {
    if (entry.path().extension() == ".yaml") known.push_back(entry.path().stem().string());
  }
  std::sort(known.begin(), known.end());
  throw InputError(InputLocation{"", 0, "machine"}, text,
                   fmt::format("a machine in {} (one of: {}) or a path to a .yaml file", machines_dir,
                               known.empty() ? std::string("none found") : join(known)));
}

Machine load_machine_by_name(std::string_view name_or_path, const std::string& machines_dir) {
  return load_machine(machine_file_path(name_or_path, machines_dir).string());
}

UncertaintyRange parse_parameter_setting(const Machine& machine, const std::string& setting) {
  const std::string file;  // the command line
  const auto equals = setting.find('=');
  const Field whole{&file, YAML::Node(setting), "--set", 0};
  if (equals == std::string::npos || equals == 0 || equals + 1 == setting.size()) {
    whole.fail(setting, "NAME=VALUE, NAME one of the machine's uncertain parameters (e.g. gemm_efficiency_scale=0.8, "
                        "collective_step_latency=40 us)");
  }
  const std::string name = setting.substr(0, equals);
  const std::string text = setting.substr(equals + 1);
  UncertaintyRange r;
  r.parameter = read_parameter_name(whole, name, machine);
  // A setting moves the default library's term (the one a study's or plan's `library` picked): one
  // it lacks would change nothing, silently.
  if (is_collective_term(r.parameter) && !machine.collective_libraries.empty())
    require_ranged_term(Field{&file, YAML::Node(setting), "--set", 0}, r, machine.collective_libraries.front());
  const ParameterReading v = read_parameter_value(Field{&file, YAML::Node(text), "--set " + name, 0}, r.parameter, machine);
  r.low = r.high = v.number;
  r.low_time = r.high_time = v.time;
  r.source = "--set " + setting;
  return r;
}

Machine with_collective_library(Machine machine, const std::string& name, const InputLocation& where) {
  if (!use_collective_library(machine, name)) {
    throw InputError(where, name,
                     fmt::format("one of the collective libraries of {}: {}", machine.name,
                                 collective_library_names(machine)));
  }
  return machine;
}

}  // namespace ws
