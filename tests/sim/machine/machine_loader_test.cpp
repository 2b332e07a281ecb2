// Validation tests for the machine loader: a small valid machine, then one test per class of bad
// input, each checking that the error names the file, the 1-based line, the dotted key and what
// was expected.
#include "sim/machine/machine_loader.hpp"
#include "sim/net/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "base/input_error.hpp"
#include "base/quantity.hpp"

namespace ws {
namespace {
using namespace ws::literals;

const std::string kFile = "tiny.yaml";

// Line numbers matter: the tests below name them.
const std::string kValid =
    "name: tiny\n"                                                                   // 1
    "nodes: 8\n"                                                                     // 2
    "device:\n"                                                                      // 3
    "  name: \"Test GPU\"\n"                                                         // 4
    "  peak: {bf16: \"100 TFLOP/s\", fp16: \"100 TFLOP/s\", fp32: \"10 TFLOP/s\"}\n"  // 5
    "  memory: {capacity: \"16 GiB\", bandwidth: \"1 TB/s\"}\n"                      // 6
    "  gemm_efficiency:\n"                                                           // 7
    "    - {m: 1024, n: 1024, k: 1024, efficiency: 0.5}\n"                           // 8
    "node:\n"                                                                        // 9
    "  devices: 2\n"                                                                 // 10
    "  links:\n"                                                                     // 11
    "    - {between: [0, 1], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n"          // 12
    "  nics:\n"                                                                      // 13
    "    - {device: 0, bandwidth: \"25 GB/s\", latency: \"1 us\"}\n"                 // 14
    "    - {device: 1, bandwidth: \"25 GB/s\", latency: \"1 us\"}\n"                 // 15
    "network:\n"                                                                     // 16
    "  topology: dragonfly\n"                                                        // 17
    "  groups: 3\n"                                                                  // 18
    "  switches_per_group: 4\n"                                                      // 19
    "  ports_per_switch: 16\n"                                                       // 20
    "  endpoints_per_switch: 4\n"                                                    // 21
    "  global_ports_per_switch: 2\n"                                                 // 22
    "  global_links_per_group_pair: 2\n"                                             // 23
    "  nodes_per_group: 8\n"                                                         // 24
    "  links:\n"                                                                     // 25
    "    endpoint: {bandwidth: \"25 GB/s\", latency: \"20 ns\"}\n"                   // 26
    "    local: {bandwidth: \"25 GB/s\", latency: \"20 ns\"}\n"                      // 27
    "    global: {bandwidth: \"25 GB/s\", latency: \"150 ns\"}\n"                    // 28
    "  switch_latency: \"350 ns\"\n"                                                 // 29
    "  routing: adaptive\n"                                                          // 30
    "collectives:\n"                                                                 // 31
    "  - {name: nccl, launch_latency: \"10 us\", step_latency: \"5 us\", bandwidth_efficiency: 0.8}\n";  // 32

// kValid with the first occurrence of `from` replaced; fails the test if `from` is absent.
std::string with(const std::string& from, const std::string& to, std::string text = kValid) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "test bug: '" << from << "' not in the YAML";
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Parses `yaml`, which must fail, and checks every part of the error.
void expect_rejected(const std::string& yaml, int line, const std::string& key, const std::string& expected_part) {
  try {
    parse_machine(yaml, kFile);
    ADD_FAILURE() << "accepted, but expected an error at line " << line << " key '" << key << "'";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.where().file, kFile);
    EXPECT_EQ(e.where().line, line) << message;
    EXPECT_EQ(e.where().key, key) << message;
    EXPECT_NE(message.find(kFile + ":" + std::to_string(line)), std::string::npos) << message;
    if (!key.empty()) {
      EXPECT_NE(message.find("'" + key + "'"), std::string::npos) << message;
    }
    EXPECT_NE(e.expected().find(expected_part), std::string::npos) << message;
    EXPECT_NE(message.find(expected_part), std::string::npos) << message;
  }
}

TEST(MachineLoader, AcceptsValidMachine) {
  const Machine m = parse_machine(kValid, kFile);
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.source_file, kFile);
  EXPECT_EQ(m.nodes, 8);
  EXPECT_EQ(m.total_devices(), 16);
  EXPECT_EQ(m.device.peak_bf16.flops(), 100e12);
  EXPECT_EQ(m.device.memory_capacity_bytes, 16.0 * (1ull << 30));
  ASSERT_EQ(m.node.links.size(), 1u);
  EXPECT_EQ(m.node.links[0].bandwidth, 100_GBps);
  EXPECT_EQ(m.node.links[0].latency, 1_us);
  ASSERT_EQ(m.node.nics.size(), 2u);
  EXPECT_EQ(m.node.nics[1].attached_device, 1);
  EXPECT_EQ(m.node.nic_efficiency.large_message_efficiency, 1.0);  // default when the key is absent
  EXPECT_EQ(m.network.groups, 3);
  EXPECT_EQ(m.network.global_link_latency, 150_ns);
  EXPECT_EQ(m.network.routing, RoutingPolicy::adaptive);
  ASSERT_EQ(m.collective_libraries.size(), 1u);
  EXPECT_EQ(m.collective_libraries[0].step_latency, 5_us);
}

TEST(MachineLoader, ExpandsAllToAllIntoEveryPairOnce) {
  const std::string yaml = with("  devices: 2\n  links:\n    - {between: [0, 1], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n",
                                "  devices: 4\n  all_to_all: {bandwidth: \"150 GB/s\", latency: \"2 us\"}\n");
  const Machine m = parse_machine(with("  nodes_per_group: 8\n", "  nodes_per_group: 4\n", yaml), kFile);
  ASSERT_EQ(m.node.links.size(), 6u);  // 4 choose 2
  std::set<std::pair<int, int>> pairs;
  for (const auto& link : m.node.links) {
    EXPECT_NE(link.device_a, link.device_b);
    EXPECT_EQ(link.bandwidth, 150_GBps);
    EXPECT_EQ(link.latency, 2_us);
    pairs.insert(std::minmax(link.device_a, link.device_b));
  }
  EXPECT_EQ(pairs.size(), 6u);
}

TEST(MachineLoader, ReadsTheHostACalibratedFileWasMeasuredOn) {
  const std::string host = "measured_on: {hostname: vm, machine_id: \"\", boot_id: b1, cpu_model: \"AMD EPYC\", cores: 2}\n";
  const Machine m = parse_machine(kValid + host, kFile);
  ASSERT_TRUE(m.measured_on.has_value());
  EXPECT_EQ(m.measured_on->hostname, "vm");
  EXPECT_EQ(m.measured_on->machine_id, "");
  EXPECT_EQ(m.measured_on->boot_id, "b1");
  EXPECT_EQ(m.measured_on->cores, 2);
  EXPECT_FALSE(parse_machine(kValid, kFile).measured_on.has_value());
  const int line = static_cast<int>(std::count(kValid.begin(), kValid.end(), '\n')) + 1;
  expect_rejected(kValid + "measured_on: {hostname: vm, boot_id: b1, cores: 0}\n", line, "measured_on.cores", "an integer from 1");
}

TEST(MachineLoader, RejectsLinksAndAllToAllTogether) {
  expect_rejected(with("  nics:\n", "  all_to_all: {bandwidth: \"1 GB/s\", latency: \"1 us\"}\n  nics:\n"), 13,
                  "node.all_to_all", "not both");
}

TEST(MachineLoader, RejectsUnknownKey) {
  expect_rejected(with("  switch_latency:", "  switch_latncy:"), 29, "network.switch_latncy",
                  "one of the keys: topology, groups, switches_per_group");
}

TEST(MachineLoader, RejectsMissingRequiredKey) {
  // A missing key is reported at the key of the map that should hold it (the document root: line 1).
  expect_rejected(with("nodes: 8\n", "# nodes left out\n"), 1, "nodes", "required key 'nodes'");
  expect_rejected(with("  routing: adaptive\n", "\n"), 16, "network.routing", "required key 'routing'");
}

TEST(MachineLoader, RejectsListWhereMapExpected) {
  expect_rejected(with("  peak: {bf16: \"100 TFLOP/s\", fp16: \"100 TFLOP/s\", fp32: \"10 TFLOP/s\"}",
                       "  peak: [\"100 TFLOP/s\"]"),
                  5, "device.peak", "a map with keys: bf16, fp16, fp32");
}

TEST(MachineLoader, RejectsMapWhereListExpected) {
  expect_rejected(with("    - {m: 1024", "    {m: 1024"), 7, "device.gemm_efficiency", "a list of");
}

TEST(MachineLoader, RejectsScalarWhereMapExpected) {
  expect_rejected(with("  memory: {capacity: \"16 GiB\", bandwidth: \"1 TB/s\"}", "  memory: \"16 GiB\""), 6,
                  "device.memory", "a map with keys: capacity, bandwidth");
}

TEST(MachineLoader, RejectsNonInteger) {
  expect_rejected(with("  devices: 2\n", "  devices: 2.5\n"), 10, "node.devices", "an integer");
}

TEST(MachineLoader, RejectsNumberWithoutUnit) {
  expect_rejected(with("  switch_latency: \"350 ns\"", "  switch_latency: 350"), 29, "network.switch_latency",
                  std::string(kTimeUnits));
}

TEST(MachineLoader, RejectsWrongUnit) {
  expect_rejected(with("global: {bandwidth: \"25 GB/s\"", "global: {bandwidth: \"25 GB\""), 28,
                  "network.links.global.bandwidth", std::string(kBandwidthUnits));
  expect_rejected(with("capacity: \"16 GiB\"", "capacity: \"16 GiB/s\""), 6, "device.memory.capacity",
                  std::string(kBytesUnits));
  expect_rejected(with("bf16: \"100 TFLOP/s\"", "bf16: \"100 TB/s\""), 5, "device.peak.bf16",
                  std::string(kFlopRateUnits));
}

TEST(MachineLoader, RejectsNonPositiveBandwidth) {
  expect_rejected(with("    - {device: 1, bandwidth: \"25 GB/s\"", "    - {device: 1, bandwidth: \"0 GB/s\""), 15,
                  "node.nics[1].bandwidth", "a bandwidth between 1 MB/s and 100 TB/s");
}

// Typos of a unit that parse as valid quantities but would wrap int64 picoseconds or rank a
// nonsense layout first: each is rejected naming the key and the plausible range.
TEST(MachineLoader, RejectsImplausibleQuantitiesWithTheirRange) {
  expect_rejected(with("    - {device: 1, bandwidth: \"25 GB/s\"", "    - {device: 1, bandwidth: \"300 B/s\""), 15,
                  "node.nics[1].bandwidth", "between 1 MB/s and 100 TB/s");
  expect_rejected(with("    - {device: 1, bandwidth: \"25 GB/s\"", "    - {device: 1, bandwidth: \"1e-300 B/s\""), 15,
                  "node.nics[1].bandwidth", "between 1 MB/s and 100 TB/s");
  expect_rejected(with("    - {device: 1, bandwidth: \"25 GB/s\"", "    - {device: 1, bandwidth: \"inf GB/s\""), 15,
                  "node.nics[1].bandwidth", "between 1 MB/s and 100 TB/s");
  expect_rejected(with("bandwidth: \"100 GB/s\", latency: \"1 us\"", "bandwidth: \"100 GB/s\", latency: \"4294967296 us\""),
                  12, "node.links[0].latency", "a time between 0 s and 1 s");
  expect_rejected(with("bandwidth: \"100 GB/s\", latency: \"1 us\"", "bandwidth: \"100 GB/s\", latency: \"nan s\""), 12,
                  "node.links[0].latency", "a time between 0 s and 1 s");
  expect_rejected(with("fp32: \"10 TFLOP/s\"", "fp32: \"312 FLOP/s\""), 5, "device.peak.fp32",
                  "between 1 MFLOP/s and 1000 PFLOP/s");
}

TEST(MachineLoader, ADirectoryIsNotAMachineFile) {
  try {
    load_machine(::testing::TempDir());
    ADD_FAILURE() << "a directory loaded as a machine";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a directory"), std::string::npos) << e.what();
  }
}

TEST(MachineLoader, RejectsNonPositiveCapacity) {
  expect_rejected(with("capacity: \"16 GiB\"", "capacity: \"0 GiB\""), 6, "device.memory.capacity", "a size between 1 B and 1 PiB");
}

TEST(MachineLoader, RejectsNonPositivePeak) {
  expect_rejected(with("fp32: \"10 TFLOP/s\"", "fp32: \"-10 TFLOP/s\""), 5, "device.peak.fp32",
                  "a compute rate between 1 MFLOP/s and 1000 PFLOP/s");
}

TEST(MachineLoader, RejectsNegativeLatency) {
  expect_rejected(with("bandwidth: \"100 GB/s\", latency: \"1 us\"", "bandwidth: \"100 GB/s\", latency: \"-1 us\""), 12,
                  "node.links[0].latency", "a time between 0 s and 1 s");
}

TEST(MachineLoader, RejectsEfficiencyOutsideZeroOne) {
  expect_rejected(with("bandwidth_efficiency: 0.8", "bandwidth_efficiency: 1.2"), 32,
                  "collectives[0].bandwidth_efficiency", "a number in (0, 1]");
  expect_rejected(with("efficiency: 0.5", "efficiency: 0"), 8, "device.gemm_efficiency[0].efficiency",
                  "a number in (0, 1]");
}

TEST(MachineLoader, ReadsAndChecksTheComputeSlowdownUnderOverlap) {
  EXPECT_EQ(parse_machine(kValid, kFile).collective_libraries[0].compute_slowdown, 0.0);
  const std::string slowed = with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, compute_slowdown: 0.2}");
  EXPECT_EQ(parse_machine(slowed, kFile).collective_libraries[0].compute_slowdown, 0.2);
  expect_rejected(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, compute_slowdown: 1.5}"), 32,
                  "collectives[0].compute_slowdown", "a number in [0, 1)");
  expect_rejected(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, compute_slowdown: fast}"), 32,
                  "collectives[0].compute_slowdown", "a number in [0, 1)");
}

TEST(MachineLoader, RejectsZeroNics) {
  const std::string nics =
      "  nics:\n"
      "    - {device: 0, bandwidth: \"25 GB/s\", latency: \"1 us\"}\n"
      "    - {device: 1, bandwidth: \"25 GB/s\", latency: \"1 us\"}\n";
  expect_rejected(with(nics, "  nics: []\n"), 13, "node.nics", "a non-empty list");
}

TEST(MachineLoader, RejectsZeroDevices) {
  expect_rejected(with("  devices: 2\n", "  devices: 0\n"), 10, "node.devices", "an integer from 1 to 1024");
}

// Sizes whose tables would not fit in memory are refused on load, with the limit, before any is
// built (10,000,000 devices per node once took 2.2 GB to produce a 99 MB error message).
TEST(MachineLoader, RefusesSizesAboveTheDocumentedLimits) {
  expect_rejected(with("  devices: 2\n", "  devices: 10000000\n"), 10, "node.devices", "an integer from 1 to 1024");
  expect_rejected(with("  groups: 3\n", "  groups: 100000\n"), 18, "network.groups", "an integer from 1 to 1024");
  expect_rejected(with("  switches_per_group: 4\n", "  switches_per_group: 9999\n"), 19, "network.switches_per_group",
                  "an integer from 1 to 256");
  expect_rejected(with("  nodes_per_group: 8\n", "  nodes_per_group: 2147483647\n"), 24, "network.nodes_per_group",
                  "an integer from 1 to 4096");
  std::string many;
  for (int i = 0; i < 20001; ++i) many += "    - {m: " + std::to_string(i + 1) + ", n: 8, k: 8, efficiency: 0.5}\n";
  expect_rejected(with("    - {m: 1024, n: 1024, k: 1024, efficiency: 0.5}\n", many), 7, "device.gemm_efficiency",
                  "at most 20000");
}

// One GEMM shape, one efficiency: a second entry for a shape (the same or another efficiency) is
// refused, naming the first.
TEST(MachineLoader, RejectsAGemmShapeGivenTwice) {
  expect_rejected(with("    - {m: 1024, n: 1024, k: 1024, efficiency: 0.5}\n",
                       "    - {m: 1024, n: 1024, k: 1024, efficiency: 0.5}\n"
                       "    - {m: 1024, n: 1024, k: 1024, efficiency: 0.9}\n"),
                  9, "device.gemm_efficiency[1]", "each GEMM shape once (already in device.gemm_efficiency[0])");
}

// A node whose devices are joined only as a chain is accepted: routes inside it may take any number
// of hops (sim/net topology tests), so the loader has nothing to refuse.
TEST(MachineLoader, AcceptsAChainOfDevicesInsideANode) {
  std::string chain = "  devices: 4\n  links:\n";
  for (int a = 0; a < 3; ++a)
    chain += "    - {between: [" + std::to_string(a) + ", " + std::to_string(a + 1) + "], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n";
  const std::string yaml = with("  devices: 2\n  links:\n    - {between: [0, 1], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n", chain);
  EXPECT_EQ(parse_machine(yaml, kFile).node.links.size(), 3U);
}

TEST(MachineLoader, RejectsDeviceIndexOutOfRange) {
  expect_rejected(with("    - {device: 1,", "    - {device: 2,"), 15, "node.nics[1].device", "a device index in [0, 1]");
  expect_rejected(with("between: [0, 1]", "between: [0, 7]"), 12, "node.links[0].between[1]", "a device index in [0, 1]");
}

TEST(MachineLoader, RejectsSelfLink) {
  expect_rejected(with("between: [0, 1]", "between: [1, 1]"), 12, "node.links[0].between", "no self-links");
}

TEST(MachineLoader, RejectsDuplicateLink) {
  const std::string link = "    - {between: [0, 1], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n";
  expect_rejected(with(link, link + "    - {between: [1, 0], bandwidth: \"50 GB/s\", latency: \"1 us\"}\n"), 13,
                  "node.links[1].between", "each device pair at most once (already in node.links[0])");
}

TEST(MachineLoader, RejectsDisconnectedNode) {
  const std::string yaml = with("  devices: 2\n  links:\n    - {between: [0, 1], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n",
                                "  devices: 4\n  links:\n"
                                "    - {between: [0, 1], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n"
                                "    - {between: [2, 3], bandwidth: \"100 GB/s\", latency: \"1 us\"}\n");
  try {
    parse_machine(yaml, kFile);
    ADD_FAILURE() << "a node split in two was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 11);
    EXPECT_EQ(e.where().key, "node.links");
    EXPECT_EQ(e.value(), "2 separate groups of devices: {0, 1} {2, 3}");
    EXPECT_NE(std::string(e.what()).find("tiny.yaml:11"), std::string::npos);
    EXPECT_NE(e.expected().find("links that connect all 4 devices"), std::string::npos);
  }
}

TEST(MachineLoader, RejectsTooManyPortsPerSwitch) {
  expect_rejected(with("  ports_per_switch: 16", "  ports_per_switch: 8"), 20, "network.ports_per_switch",
                  "= 4 + 3 + 2 = 9 ports");
}

TEST(MachineLoader, RejectsMoreNicsThanEndpointPorts) {
  expect_rejected(with("  nodes_per_group: 8", "  nodes_per_group: 9"), 24, "network.nodes_per_group",
                  "switches_per_group * endpoints_per_switch = 4 * 4 = 16");
}

TEST(MachineLoader, RejectsMoreNodesThanGroupsHold) {
  expect_rejected(with("nodes: 8\n", "nodes: 25\n"), 2, "nodes", "network.groups * network.nodes_per_group = 3 * 8 = 24");
}

TEST(MachineLoader, RejectsMoreGlobalLinksThanGlobalPorts) {
  expect_rejected(with("  global_links_per_group_pair: 2", "  global_links_per_group_pair: 5"), 23,
                  "network.global_links_per_group_pair", "switches_per_group * global_ports_per_switch = 4 * 2 = 8");
}

// Which switch a node hangs off: blocks of nodes_per_switch consecutive nodes share switches; a
// block must fit a switch's endpoint ports and the group's switches must hold every block's NICs.
TEST(MachineLoader, NodesPerSwitchBlocksNodesOntoSwitchesWithinThePortBudget) {
  EXPECT_EQ(parse_machine(kValid, "tiny.yaml").network.nodes_per_switch, 0);  // striped
  const Machine m = parse_machine(with("  nodes_per_group: 8\n", "  nodes_per_group: 8\n  nodes_per_switch: 4\n"), "tiny.yaml");
  EXPECT_EQ(m.network.nodes_per_switch, 4);
  const Topology t = build_topology(m, 8);
  // Nodes 0-3 (block 0) have NIC k on switch k, nodes 4-7 on switch 2 + k.
  for (int node = 0; node < 8; ++node) {
    for (int k = 0; k < 2; ++k) EXPECT_EQ(t.switch_of_nic[static_cast<std::size_t>(node * 2 + k)], (node / 4) * 2 + k);
  }
  expect_rejected(with("  nodes_per_group: 8\n", "  nodes_per_group: 8\n  nodes_per_switch: 5\n"), 25,
                  "network.nodes_per_switch", "at most endpoints_per_switch = 4");
  expect_rejected(with("  nodes_per_group: 8\n", "  nodes_per_group: 8\n  nodes_per_switch: 2\n"), 25,
                  "network.nodes_per_switch", "ceil(nodes_per_group / nodes_per_switch) * NICs per node <= switches_per_group = 4");
}

TEST(MachineLoader, RejectsUnknownRouting) {
  expect_rejected(with("  routing: adaptive", "  routing: ugal"), 30, "network.routing",
                  "one of: minimal, non-minimal, adaptive");
}

TEST(MachineLoader, CollectiveProgressIsAsynchronousUnlessTheFileSaysHost) {
  EXPECT_EQ(parse_machine(kValid, kFile).collective_libraries.at(0).progress, CollectiveProgress::asynchronous);
  const Machine host = parse_machine(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, progress: host}"), kFile);
  EXPECT_EQ(host.collective_libraries.at(0).progress, CollectiveProgress::host);
}

TEST(MachineLoader, RejectsUnknownCollectiveProgress) {
  expect_rejected(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, progress: sometimes}"), 32,
                  "collectives[0].progress", "one of: asynchronous, host");
}

TEST(MachineLoader, StepsAreSerialUnlessTheFileSaysPipelined) {
  EXPECT_EQ(parse_machine(kValid, kFile).collective_libraries.at(0).step_overlap, StepOverlap::serial);
  const Machine piped =
      parse_machine(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, step_overlap: pipelined}"), kFile);
  EXPECT_EQ(piped.collective_libraries.at(0).step_overlap, StepOverlap::pipelined);
  expect_rejected(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, step_overlap: overlapped}"), 32,
                  "collectives[0].step_overlap", "one of: serial, pipelined");
}

TEST(MachineLoader, ReadsAnEagerOverflowWindowAndRejectsAnEmptyOne) {
  const Machine m = parse_machine(
      with("bandwidth_efficiency: 0.8}",
           "bandwidth_efficiency: 0.8, eager_overflow: {above: 64 KiB, up_to: 256 KiB, per_step: 310 us}}"),
      kFile);
  ASSERT_TRUE(m.collective_libraries.at(0).eager_overflow.has_value());
  EXPECT_EQ(m.collective_libraries.at(0).eager_overflow->above, 65536u);
  EXPECT_EQ(m.collective_libraries.at(0).eager_overflow->up_to, 262144u);
  EXPECT_FALSE(parse_machine(kValid, kFile).collective_libraries.at(0).eager_overflow.has_value());
  expect_rejected(with("bandwidth_efficiency: 0.8}",
                       "bandwidth_efficiency: 0.8, eager_overflow: {above: 256 KiB, up_to: 64 KiB, per_step: 310 us}}"),
                  32, "collectives[0].eager_overflow.up_to", "a size larger than 'above'");
}

TEST(MachineLoader, ReadsTheLlAndLl128ProtocolsInThatOrderAndChecksTheirTerms) {
  EXPECT_TRUE(parse_machine(kValid, kFile).collective_libraries.at(0).protocols.empty());
  const Machine m = parse_machine(
      with("bandwidth_efficiency: 0.8}",
           "bandwidth_efficiency: 0.8, ll128: {step_latency: \"8 us\", bandwidth_efficiency: 0.3}, "
           "low_latency: {step_latency: \"3 us\", bandwidth_efficiency: 0.05}}"),
      kFile);
  const auto& protocols = m.collective_libraries.at(0).protocols;
  ASSERT_EQ(protocols.size(), 2u);
  EXPECT_EQ(protocols[0].name, "LL");
  EXPECT_EQ(protocols[0].step_latency, 3_us);
  EXPECT_EQ(protocols[1].name, "LL128");
  EXPECT_DOUBLE_EQ(protocols[1].bandwidth_efficiency, 0.3);
  expect_rejected(with("bandwidth_efficiency: 0.8}",
                       "bandwidth_efficiency: 0.8, ll128: {step_latency: \"8 us\", bandwidth_efficiency: 1.3}}"),
                  32, "collectives[0].ll128.bandwidth_efficiency", "a number in (0, 1]");
  expect_rejected(with("bandwidth_efficiency: 0.8}", "bandwidth_efficiency: 0.8, ll128: {step_latency: \"8 us\"}}"), 32,
                  "collectives[0].ll128.bandwidth_efficiency", "required key 'bandwidth_efficiency'");
  EXPECT_EQ(protocols[0].bytes_per_channel, 0u);  // not given: every channel
  const Machine few = parse_machine(
      with("bandwidth_efficiency: 0.8}",
           "bandwidth_efficiency: 0.8, low_latency: {step_latency: \"3 us\", bandwidth_efficiency: 0.05, "
           "bytes_per_channel: \"4 KiB\"}}"),
      kFile);
  EXPECT_EQ(few.collective_libraries.at(0).protocols.at(0).bytes_per_channel, 4096u);
  EXPECT_EQ(few.collective_libraries.at(0).bytes_per_channel, 0u);  // the library's own terms: every channel
  expect_rejected(with("bandwidth_efficiency: 0.8}",
                       "bandwidth_efficiency: 0.8, low_latency: {step_latency: \"3 us\", bandwidth_efficiency: 0.05, "
                       "bytes_per_channel: lots}}"),
                  32, "collectives[0].low_latency.bytes_per_channel", "");
}

TEST(MachineLoader, RejectsUnknownTopology) {
  expect_rejected(with("  topology: dragonfly", "  topology: fat-tree"), 17, "network.topology", "one of: dragonfly");
}

TEST(MachineLoader, RejectsYamlSyntaxError) {
  // An unclosed flow map on line 6.
  expect_rejected(with("  memory: {capacity: \"16 GiB\", bandwidth: \"1 TB/s\"}", "  memory: {capacity: \"16 GiB\", ]"),
                  6, "", "valid YAML");
}

TEST(MachineLoader, RejectsMissingFile) {
  const std::string path = "/nonexistent/dir/nowhere.yaml";
  try {
    load_machine(path);
    ADD_FAILURE() << "a missing file was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    EXPECT_NE(e.expected().find("No such file or directory"), std::string::npos);
  }
}

TEST(MachineLoader, RejectsUnknownMachineNameAndListsKnownOnes) {
  const std::string dir = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";
  try {
    load_machine_by_name("summit", dir);
    ADD_FAILURE() << "an unknown machine name was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.value(), "summit");
    EXPECT_EQ(e.where().key, "machine");
    // Sorted; other files (machines/local.yaml from `weakscale calibrate`) may sit between them.
    const std::string& listed = e.expected();
    EXPECT_LT(listed.find("alps"), listed.find("frontier")) << e.what();
    EXPECT_LT(listed.find("frontier"), listed.find("perlmutter")) << e.what();
    EXPECT_NE(listed.find("perlmutter"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

TEST(MachineLoader, ReadsOptionalElementwiseThroughputAndBusyNodeCompute) {
  const Machine plain = parse_machine(kValid, kFile);
  EXPECT_EQ(plain.device.busy_node_compute, 1.0);
  EXPECT_EQ(plain.device.elementwise.of(ElementwiseKernel::gelu_forward), 0.0);
  const Machine m = parse_machine(
      with("node:\n", "  busy_node_compute: 0.85\n  elementwise_throughput: {gelu_forward: 4.2e7, softmax_backward: 3e8}\nnode:\n"),
      kFile);
  EXPECT_EQ(m.device.busy_node_compute, 0.85);
  EXPECT_EQ(m.device.elementwise.of(ElementwiseKernel::gelu_forward), 4.2e7);
  EXPECT_EQ(m.device.elementwise.of(ElementwiseKernel::softmax_backward), 3e8);
  EXPECT_EQ(m.device.elementwise.of(ElementwiseKernel::gelu_backward), 0.0);
}

TEST(MachineLoader, RejectsUnknownElementwiseKernelAndBadThroughput) {
  expect_rejected(with("node:\n", "  elementwise_throughput: {gelu_fwd: 1e8}\nnode:\n"), 9,
                  "device.elementwise_throughput.gelu_fwd", "gelu_forward");
  expect_rejected(with("node:\n", "  elementwise_throughput: {gelu_forward: -1}\nnode:\n"), 9,
                  "device.elementwise_throughput.gelu_forward", "a positive number");
  expect_rejected(with("node:\n", "  elementwise_throughput: {}\nnode:\n"), 9, "device.elementwise_throughput",
                  "a map of elements per second");
  expect_rejected(with("node:\n", "  busy_node_compute: 1.5\nnode:\n"), 9, "device.busy_node_compute", "(0, 1]");
}

TEST(MachineLoader, ReadsOptionalFusedAttention) {
  EXPECT_FALSE(parse_machine(kValid, kFile).device.fused_attention.has_value());
  const Machine m = parse_machine(
      with("node:\n", "  fused_attention: {forward_efficiency: 0.457, backward_efficiency: 0.318}\nnode:\n"), kFile);
  ASSERT_TRUE(m.device.fused_attention.has_value());
  EXPECT_EQ(m.device.fused_attention->forward_efficiency, 0.457);
  EXPECT_EQ(m.device.fused_attention->backward_efficiency, 0.318);
}

TEST(MachineLoader, RejectsBadFusedAttention) {
  expect_rejected(
      with("node:\n", "  fused_attention: {forward_efficiency: 1.5, backward_efficiency: 0.3}\nnode:\n"), 9,
      "device.fused_attention.forward_efficiency", "(0, 1]");
  expect_rejected(with("node:\n", "  fused_attention: {forward_efficiency: 0.5}\nnode:\n"), 9,
                  "device.fused_attention.backward_efficiency", "required key 'backward_efficiency'");
  expect_rejected(
      with("node:\n", "  fused_attention: {forward_efficiency: 0.5, backward_efficiency: 0.3, speed: 2}\nnode:\n"),
      9, "device.fused_attention.speed", "forward_efficiency, backward_efficiency");
}

TEST(MachineLoader, AFullGridOfGemmSamplesIsIndexedAndScatteredSamplesAreNot) {
  const std::string dir = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";
  EXPECT_FALSE(load_machine_by_name("frontier", dir).device.gemm.grid.has_value());  // a best shape and estimates
  const Machine alps = load_machine_by_name("alps", dir);
  ASSERT_TRUE(alps.device.gemm.grid.has_value());
  EXPECT_EQ(alps.device.gemm.samples.size(), 729u);  // 128 ... 32768 by powers of 2, cubed
}

}  // namespace
}  // namespace ws
