// The machine description as plain data: devices, the node's internal link graph, NICs, the
// Slingshot dragonfly, and collective-library overheads. Filled by load_machine() from YAML;
// every later stage (analytic model, network simulator, compute model) reads only this.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "workload/elementwise_kernel.hpp"
#include "workload/collective_op.hpp"
#include "workload/precision.hpp"
#include "base/units.hpp"

namespace ws {


// One measured or estimated GEMM efficiency (achieved / peak) at a shape C[m x n] += A[m x k] B[k x n].
struct GemmEfficiencySample {
  double m = 0, n = 0, k = 0;
  double efficiency = 0;  // in (0, 1]
};

// Where the samples of a table are every (m, n, k) combination of their distinct m, n and k values
// (a measured sweep), their positions on that grid, so that gemm_efficiency() interpolates between
// neighbours. Shapes only: the efficiencies stay in the samples, so scaling them keeps the index valid.
struct GemmEfficiencyGrid {
  std::array<std::vector<double>, 3> log2_axis;  // ascending distinct log2(m), log2(n), log2(k)
  std::vector<std::size_t> sample_at;            // sample index of grid point (i, j, l) at (i * nn + j) * nk + l
};

// Shape-dependent GEMM efficiency. Looked up by gemm_efficiency() in sim/compute.
struct GemmEfficiencyTable {
  std::vector<GemmEfficiencySample> samples;  // at least one
  std::optional<GemmEfficiencyGrid> grid;     // set by make_gemm_table() when the samples form a full grid
};

// The table of these samples, with its grid index when they form a full grid.
GemmEfficiencyTable make_gemm_table(std::vector<GemmEfficiencySample> samples);

// Elements per second each element-wise kernel processes on one device, fp32 (0: not given; the
// memory roofline alone prices that kernel). Optional in a machine file: on GPUs these kernels are
// memory-bound, on a CPU core several are bound by their arithmetic.
struct ElementwiseThroughput {
  std::array<double, kElementwiseKernels> elements_per_s{};
  double of(ElementwiseKernel kernel) const { return elements_per_s[static_cast<std::size_t>(kernel)]; }
  double& of(ElementwiseKernel kernel) { return elements_per_s[static_cast<std::size_t>(kernel)]; }
};

// A fused attention kernel's rates (FlashAttention-style: the S x S scores never leave the chip),
// as achieved / peak on the flops of causal attention: forward 2 S^2 d per sequence and head (half
// of Q K^T and P V), backward 2.5 times that (it recomputes the scores). Optional in a machine file;
// without it the step prices the engine's own attention: its GEMMs and the softmax's memory traffic.
struct FusedAttention {
  double forward_efficiency = 0;   // in (0, 1]
  double backward_efficiency = 0;  // in (0, 1]
};

struct DeviceSpec {
  std::string name;
  FlopRate peak_bf16;
  FlopRate peak_fp16;
  FlopRate peak_fp32;
  Bytes memory_capacity_bytes = 0;
  Bandwidth memory_bandwidth;
  GemmEfficiencyTable gemm;
  ElementwiseThroughput elementwise;
  // Share of the alone rates (gemm, elementwise) a device keeps when every device of its node
  // computes at once: shared caches, power and clock on a CPU socket; 1 for GPUs.
  double busy_node_compute = 1.0;
  std::optional<FusedAttention> fused_attention;  // GPUs whose frameworks run a fused kernel
};

// A device-to-device link inside a node; usable in both directions, `bandwidth` per direction.
// Several physical links between one pair are written as one entry with their summed bandwidth.
struct IntraNodeLink {
  int device_a = 0;
  int device_b = 0;
  Bandwidth bandwidth;
  Time latency;
};

// A network interface: which device of the node it hangs off, and its injection rate per direction.
struct Nic {
  int attached_device = 0;
  Bandwidth bandwidth;
  Time latency;  // NIC-side per-message latency (injection + ejection)
};

// Small messages do not reach line rate: efficiency(size) = large_message_efficiency * size /
// (size + half_bandwidth_bytes), so the half-bandwidth point sits at half_bandwidth_bytes.
struct NicEfficiencyCurve {
  double large_message_efficiency = 1.0;
  Bytes half_bandwidth_bytes = 0;
};

struct NodeSpec {
  int devices = 0;
  std::vector<IntraNodeLink> links;  // expanded: an all-to-all shorthand in YAML becomes explicit pairs
  std::vector<Nic> nics;
  NicEfficiencyCurve nic_efficiency;
};

enum class RoutingPolicy { minimal, non_minimal, adaptive };

// 1-D (Kim-Dally) dragonfly of Rosetta-like switches. Endpoint ports face NICs, local ports form
// the all-to-all inside a group, global ports join groups.
struct DragonflySpec {
  int groups = 0;
  int switches_per_group = 0;
  int ports_per_switch = 0;
  int endpoints_per_switch = 0;
  int global_ports_per_switch = 0;
  int global_links_per_group_pair = 0;  // taper knob
  int nodes_per_group = 0;
  // Which switch a node's NICs hang off (network.nodes_per_switch, optional). 0: striped, NIC k of
  // the group's node j on switch (j x NICs per node + k) mod switches_per_group, so a node's NICs
  // and consecutive nodes never share a switch. B > 0: blocks of B consecutive nodes share
  // switches, NIC k of node j on switch (j / B) x NICs per node + k (a Frontier chassis: 16 nodes,
  // NIC k on switch blade k; SimGrid's dragonfly: B nodes per router).
  int nodes_per_switch = 0;
  Bandwidth endpoint_link_bandwidth;
  Bandwidth local_link_bandwidth;
  Bandwidth global_link_bandwidth;
  Time endpoint_link_latency;
  Time local_link_latency;
  Time global_link_latency;
  Time switch_latency;
  RoutingPolicy routing = RoutingPolicy::adaptive;
  // Share of every global link's capacity other jobs' traffic takes (machine file
  // network.background_load, optional, default 0): the machine is shared, the job's allocation is not.
  double background_load = 0.0;
};

// One point of a library's all-reduce tree/ring switch: on `nodes` nodes, all-reduce below `bytes`
// runs as a tree (machine file `tree_threshold`, e.g. from a NCCL tuner file).
struct TreeThreshold {
  int nodes = 0;
  Bytes bytes = 0;
};

// A step's "message" below is what one transfer of it carries: the step's bytes per member over the
// ring's channels (one per NIC for full-node rings), what the NIC sees as one message.
//
// A library's extra time per algorithm step on large jobs, measured for some ops only (machine file
// `large_job_overhead`): at `nodes` nodes a step whose message is `message_bytes` pays `per_step`
// more, inversely proportional to the message's bytes (a per-message cost that grows with the job).
// Log-log in node count between points, none below the first, the last point's beyond it.
struct LargeJobOverheadPoint {
  int nodes = 0;
  Time per_step;
  Bytes message_bytes = 0;
};
struct LargeJobOverhead {
  std::vector<CollectiveOp> ops;
  std::vector<LargeJobOverheadPoint> points;  // node counts increasing
};

// Eager messages that spill into the NIC's overflow path (machine file `eager_overflow`, optional):
// with libfabric's eager protocol, a step whose message is larger than `above` and at most `up_to`
// pays `per_step` more, on any number of nodes (the receive is not posted when the message lands,
// and the NIC's software overflow path copies it). Messages below the window are
// small enough for the NIC's hardware buffers; above it the rendezvous protocol takes over.
struct EagerOverflow {
  Bytes above = 0;
  Bytes up_to = 0;
  Time per_step;
};

// Protocols a library may run a call with besides its own terms (NCCL's "Simple"): NCCL's LL
// ("low latency": 8-byte stores carrying a 4-byte flag, a short step, about half the bandwidth) and
// LL128 (128-byte stores carrying 120 bytes and a flag: a step between LL's and Simple's, most of
// Simple's bandwidth); NCCL_PROTO in NCCL's documentation. The library takes, per call, whichever of
// its protocols finishes sooner, as NCCL's tuner picks by its own cost model (machine file
// `low_latency` and `ll128`, both optional).
struct ProtocolTerms {
  std::string name;  // "LL", "LL128"
  Time step_latency;
  double bandwidth_efficiency = 1.0;
  // 0, or the bytes a ring channel must carry per step before the library runs another channel:
  // NCCL and RCCL cut a ring's channels while nBytes < channels x threads x threshold, and for LL
  // on rings the threshold is multiplied by the rank count, so a rank's per-step chunk below
  // channels x (threads x 8 B) runs on fewer channels (machine file `bytes_per_channel`).
  Bytes bytes_per_channel = 0;
};

// Software overheads of a collective library (NCCL, RCCL, Cray MPICH, Open MPI).
// Who moves a non-blocking collective's data. `asynchronous`: the NIC, the GPU's copy engines or a
// progress thread, while the device computes (NCCL, RDMA offload). `host`: the rank's own core,
// inside MPI calls (Open MPI's coll/libnbc over shared memory: the engine's MPI_Test between kernels
// copies and reduces the data), so the collective's time is taken from the device's compute.
enum class CollectiveProgress { asynchronous, host };
const char* to_string(CollectiveProgress progress);  // "asynchronous", "host"

// How a step's latency and its transfer add up. `serial`: one after the other (an MPI library's
// message per step). `pipelined`: NCCL and RCCL cut each step into chunks and keep several in
// flight per channel (NCCL_STEPS slots), so the latency of one chunk overlaps the transfer of
// others: a phase costs sqrt(latency^2 + transfer^2), the sum when either dominates and up to
// 1/sqrt(2) of it when they are equal (the quadrature is our estimate of the overlap's shape,
// scored against published bus bandwidths by `weakscale collectives-vs-published`).
enum class StepOverlap { serial, pipelined };
const char* to_string(StepOverlap overlap);  // "serial", "pipelined"

struct CollectiveLibrary {
  std::string name;
  Time launch_latency;          // once per collective call
  Time step_latency;            // per algorithm step (ring hop), on top of the network latency
  double bandwidth_efficiency = 1.0;  // achieved / link bandwidth for large messages, in (0, 1]
  // Increasing node counts; empty: sim/collectives' defaults (collective_algorithm.hpp).
  std::vector<TreeThreshold> tree_thresholds = {};
  CollectiveProgress progress = CollectiveProgress::asynchronous;  // machine file: optional `progress`
  StepOverlap step_overlap = StepOverlap::serial;  // machine file: optional `step_overlap`
  // Per call, per member of the communicator (machine file `setup_latency_per_member`, optional):
  // set-up work that grows with the communicator, where a source says there is some.
  Time setup_latency_per_member = {};
  LargeJobOverhead large_job_overhead = {};  // empty: none
  std::optional<EagerOverflow> eager_overflow = {};
  std::vector<ProtocolTerms> protocols = {};  // the file's `low_latency` then `ll128`, where given
  // Machine file `compute_slowdown` (optional, default 0): how much slower the device computes while
  // one of the library's non-blocking calls is in flight beside it, as a fraction of the compute
  // time they overlap (GPU collective kernels take compute units and memory bandwidth from the
  // GEMMs they overlap). The step simulator charges it at the call's wait.
  double compute_slowdown = 0.0;
  Bytes bytes_per_channel = 0;  // the protocol in use's (ProtocolTerms), 0 for the library's own
};

// The library with protocols[protocol]'s terms in place of its own; itself for kOwnProtocol.
constexpr int kOwnProtocol = -1;
CollectiveLibrary protocol_variant(const CollectiveLibrary& library, int protocol);
// What protocol_variant changes, in place: the protocol's step latency and bandwidth efficiency.
void use_protocol_terms(CollectiveLibrary& library, const ProtocolTerms& terms);

// The extra time of eager_overflow for one step whose message is `message_bytes`; zero outside its
// window or where the library has none.
Time eager_step_overhead(const CollectiveLibrary& library, double message_bytes);

// The overhead of large_job_overhead for one step of `op` whose message is `message_bytes`, on a
// communicator spanning `nodes` nodes; zero where the table does not apply.
Time large_job_step_overhead(const CollectiveLibrary& library, CollectiveOp op, int nodes, double message_bytes);

// Which library family a CollectiveLibrary is, told by its name: names containing "nccl" or
// "rccl" are NCCL-like, names containing "openmpi" are Open MPI (its non-blocking collectives,
// coll/libnbc: what the engine calls; the calibrated local machine files), any other (cray-mpich,
// mpich) MPICH-like. The family decides the collective algorithms (sim/collectives, sim/layout_search).
enum class CollectiveFamily { nccl, mpich, open_mpi };
CollectiveFamily collective_family(const CollectiveLibrary& library);

// A machine parameter that no public source pins down, with the range it may take (machine file
// `uncertainty:`). Studies sample the ranges or move one parameter at a time (sim/study).
enum class UncertainParameter {
  gemm_efficiency_scale,            // factor on every gemm_efficiency sample (capped at 1)
  collective_step_latency,          // step_latency of a collective library (or of one of its protocols)
  collective_bandwidth_efficiency,  // bandwidth_efficiency of a collective library (or of one of its protocols)
  global_links_per_group_pair,      // network.global_links_per_group_pair
  switch_latency,                   // network.switch_latency
  background_load,                  // network.background_load
  device_speed_spread,              // variability.device_speed_spread
  compute_slowdown,                 // compute_slowdown of a collective library
  attention_efficiency_scale,       // factor on both device.fused_attention efficiencies (capped at 1)
  gemm_shape_falloff,               // exponent on each gemm_efficiency sample's ratio to the table's best
  collective_eager_overflow,        // eager_overflow.per_step of a collective library
};
// Whether a parameter is a term of one collective library (a range of it may name the library).
bool is_collective_term(UncertainParameter parameter);

// What a range spans around the value the rest of the file writes (machine file `spans:`).
enum class RangeSpan {
  // The written value is the best case a run sees (a published best-shape GEMM rate, a
  // rendezvous-only bandwidth): the range reaches from it towards the typical and the worse.
  best_to_typical,
  // The written value is a central estimate (a fit, a midpoint): the range is its error either way.
  error,
};
const char* to_string(RangeSpan span);  // "best_to_typical", "error"

struct UncertaintyRange {
  UncertainParameter parameter = UncertainParameter::gemm_efficiency_scale;
  double low = 0, high = 0;   // factor, efficiency or link count; unused for latencies
  Time low_time, high_time;   // latencies only
  std::string source;         // where the range comes from, or "estimate: <why>"
  RangeSpan spans = RangeSpan::error;
  // The collective library whose term a collective range moves (is_collective_term): the file's
  // `library:` (the loader fills in the file's first, default, library where none is written);
  // empty for the other parameters and for a `--set` setting, which moves the default library.
  std::string library = {};
  bool library_written = false;  // the entry named its library (labels say which)
  // ProtocolTerms::name ("LL", "LL128") whose step latency or bandwidth efficiency the range moves
  // (machine file `protocol: low_latency | ll128`); empty: the library's own (Simple) terms.
  std::string protocol = {};
};

bool is_latency(UncertainParameter parameter);
// "collective_step_latency", or with what it moves where the entry says: "collective_step_latency
// (rccl-eager)", "collective_bandwidth_efficiency (nccl LL128)".
std::string range_label(const UncertaintyRange& range);

// How the devices of one machine differ and fluctuate (machine file `variability:`, optional; all
// zero: identical devices, no noise). The step simulator turns them into waits: a group that
// synchronizes waits for its slowest member.
struct Variability {
  // Coefficient of variation of the devices' sustained compute speed (fixed per device: silicon,
  // power management, cooling). A job whose ranks synchronize every layer runs at its slowest.
  double device_speed_spread = 0.0;
  // Coefficient of variation of one compute span's time on a device (run-to-run jitter).
  double compute_noise = 0.0;
  // Standard deviation of a rank's arrival at a collective call (OS and runtime noise).
  Time collective_entry_jitter;
};

// The host a calibrated file was measured on (`weakscale calibrate` writes it): validation on
// another host, or on this one after a reboot (a VM's speed moves between boots), measures a host
// the file does not describe.
struct MeasuredHost {
  std::string hostname;
  std::string machine_id;  // /etc/machine-id; empty when the host has none
  std::string boot_id;     // /proc/sys/kernel/random/boot_id at calibration
  std::string cpu_model;
  int cores = 0;
};

struct Machine {
  std::string name;
  std::string description;
  std::string source_file;  // where it was loaded from, for results metadata
  int nodes = 0;
  DeviceSpec device;
  NodeSpec node;
  DragonflySpec network;
  std::vector<CollectiveLibrary> collective_libraries;  // at least one; the first is the default
  std::vector<UncertaintyRange> uncertainty;             // optional; each (parameter, library, protocol) once
  Variability variability;                               // optional
  std::optional<MeasuredHost> measured_on;               // calibrated files only
  // Uncertain parameters fixed on the command line ("gemm_efficiency_scale=0.8", --set), in the
  // order applied; empty for the file as written. Results name them.
  std::vector<std::string> overrides;

  int total_devices() const { return nodes * node.devices; }
};

FlopRate peak(const DeviceSpec& device, Precision precision);
// Makes the library named `name` the machine's default (the first, which every model prices the
// step's collectives with), keeping the others in their order; false, and the machine unchanged,
// when it has no library of that name.
bool use_collective_library(Machine& machine, std::string_view name);
// The machine without the ranges of collective libraries other than its default (the first): a
// study prices its steps with the default alone, so those ranges cannot move its answer.
Machine without_other_libraries_ranges(Machine machine);
// The machine's library names in file order, for messages: "rccl, rccl-eager, cray-mpich".
std::string collective_library_names(const Machine& machine);
// The library a range moves: the one named range.library, the first (the default) where that is
// empty; null where the machine has no such library (or none at all).
const CollectiveLibrary* ranged_library(const Machine& machine, const UncertaintyRange& range);
CollectiveLibrary* ranged_library(Machine& machine, const UncertaintyRange& range);
// A CollectiveLibrary entry's protocol block keys and the ProtocolTerms names they carry.
struct ProtocolKey {
  const char* key;   // machine file: "low_latency", "ll128"
  const char* name;  // ProtocolTerms::name: "LL", "LL128"
};
inline constexpr ProtocolKey kProtocolKeys[] = {{"low_latency", "LL"}, {"ll128", "LL128"}};
// The name a key carries ("ll128" -> "LL128"), the key of a name ("LL" -> "low_latency"); "" if none.
std::string protocol_name_of_key(std::string_view key);
std::string protocol_key_of_name(std::string_view name);
// The collective term a range names in `library` (its own, or its protocol's): `time` for the
// latencies, `number` otherwise; both null where the library lacks it (an eager window).
struct CollectiveTerm {
  Time* time = nullptr;
  double* number = nullptr;
};
CollectiveTerm ranged_term(CollectiveLibrary& library, const UncertaintyRange& range);
// The protocol terms a range moves (range.protocol of that library); null for the library's own.
ProtocolTerms* ranged_protocol(CollectiveLibrary& library, const UncertaintyRange& range);
const ProtocolTerms* ranged_protocol(const CollectiveLibrary& library, const UncertaintyRange& range);
const char* to_string(RoutingPolicy r);
const char* to_string(UncertainParameter p);

}  // namespace ws
