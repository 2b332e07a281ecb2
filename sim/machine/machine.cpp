#include "sim/machine/machine.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ws {

GemmEfficiencyTable make_gemm_table(std::vector<GemmEfficiencySample> samples) {
  GemmEfficiencyTable table;
  table.samples = std::move(samples);
  GemmEfficiencyGrid grid;
  for (const auto& s : table.samples) {
    grid.log2_axis[0].push_back(std::log2(s.m));
    grid.log2_axis[1].push_back(std::log2(s.n));
    grid.log2_axis[2].push_back(std::log2(s.k));
  }
  for (auto& axis : grid.log2_axis) {
    std::sort(axis.begin(), axis.end());
    axis.erase(std::unique(axis.begin(), axis.end()), axis.end());
  }
  const std::size_t nm = grid.log2_axis[0].size(), nn = grid.log2_axis[1].size(), nk = grid.log2_axis[2].size();
  if (table.samples.empty() || nm * nn * nk != table.samples.size()) return table;
  constexpr std::size_t kUnset = static_cast<std::size_t>(-1);
  grid.sample_at.assign(table.samples.size(), kUnset);
  auto position = [](const std::vector<double>& axis, double value) {
    return static_cast<std::size_t>(std::lower_bound(axis.begin(), axis.end(), value) - axis.begin());
  };
  for (std::size_t s = 0; s < table.samples.size(); ++s) {
    const auto& sample = table.samples[s];
    const std::size_t at = (position(grid.log2_axis[0], std::log2(sample.m)) * nn +
                            position(grid.log2_axis[1], std::log2(sample.n))) * nk +
                           position(grid.log2_axis[2], std::log2(sample.k));
    if (grid.sample_at[at] != kUnset) return table;  // a shape given twice: not a grid
    grid.sample_at[at] = s;
  }
  table.grid = std::move(grid);
  return table;
}

FlopRate peak(const DeviceSpec& device, Precision precision) {
  switch (precision) {
    case Precision::bf16: return device.peak_bf16;
    case Precision::fp16: return device.peak_fp16;
    case Precision::fp32: return device.peak_fp32;
  }
  return device.peak_fp32;
}

const char* to_string(RoutingPolicy r) {
  switch (r) {
    case RoutingPolicy::minimal: return "minimal";
    case RoutingPolicy::non_minimal: return "non-minimal";
    case RoutingPolicy::adaptive: return "adaptive";
  }
  return "?";
}

const char* to_string(StepOverlap overlap) { return overlap == StepOverlap::pipelined ? "pipelined" : "serial"; }

const char* to_string(CollectiveProgress progress) {
  switch (progress) {
    case CollectiveProgress::asynchronous:
      return "asynchronous";
    case CollectiveProgress::host:
      return "host";
  }
  return "asynchronous";
}

CollectiveFamily collective_family(const CollectiveLibrary& library) {
  const auto has = [&library](const char* part) { return library.name.find(part) != std::string::npos; };
  if (has("nccl") || has("rccl")) return CollectiveFamily::nccl;
  return has("openmpi") ? CollectiveFamily::open_mpi : CollectiveFamily::mpich;
}

bool is_latency(UncertainParameter parameter) {
  return parameter == UncertainParameter::collective_step_latency || parameter == UncertainParameter::switch_latency ||
         parameter == UncertainParameter::collective_eager_overflow;
}

bool is_collective_term(UncertainParameter parameter) {
  return parameter == UncertainParameter::collective_step_latency ||
         parameter == UncertainParameter::collective_bandwidth_efficiency ||
         parameter == UncertainParameter::compute_slowdown || parameter == UncertainParameter::collective_eager_overflow;
}

std::string range_label(const UncertaintyRange& range) {
  std::string label = to_string(range.parameter);
  if (!range.library_written && range.protocol.empty()) return label;
  std::string what = range.library_written ? range.library : std::string();
  if (!range.protocol.empty()) what += (what.empty() ? "" : " ") + range.protocol;
  return label + " (" + what + ")";
}

const char* to_string(RangeSpan span) { return span == RangeSpan::best_to_typical ? "best_to_typical" : "error"; }

const char* to_string(UncertainParameter p) {
  switch (p) {
    case UncertainParameter::gemm_efficiency_scale: return "gemm_efficiency_scale";
    case UncertainParameter::collective_step_latency: return "collective_step_latency";
    case UncertainParameter::collective_bandwidth_efficiency: return "collective_bandwidth_efficiency";
    case UncertainParameter::global_links_per_group_pair: return "global_links_per_group_pair";
    case UncertainParameter::switch_latency: return "switch_latency";
    case UncertainParameter::background_load: return "background_load";
    case UncertainParameter::device_speed_spread: return "device_speed_spread";
    case UncertainParameter::compute_slowdown: return "compute_slowdown";
    case UncertainParameter::attention_efficiency_scale: return "attention_efficiency_scale";
    case UncertainParameter::gemm_shape_falloff: return "gemm_shape_falloff";
    case UncertainParameter::collective_eager_overflow: return "collective_eager_overflow";
  }
  return "?";
}

CollectiveLibrary protocol_variant(const CollectiveLibrary& library, int protocol) {
  CollectiveLibrary l = library;
  if (protocol >= 0 && static_cast<std::size_t>(protocol) < library.protocols.size())
    use_protocol_terms(l, library.protocols[static_cast<std::size_t>(protocol)]);
  return l;
}

void use_protocol_terms(CollectiveLibrary& library, const ProtocolTerms& terms) {
  library.step_latency = terms.step_latency;
  library.bandwidth_efficiency = terms.bandwidth_efficiency;
  library.bytes_per_channel = terms.bytes_per_channel;
}

Time eager_step_overhead(const CollectiveLibrary& library, double message_bytes) {
  const auto& e = library.eager_overflow;
  const bool inside =
      e && message_bytes > static_cast<double>(e->above) && message_bytes <= static_cast<double>(e->up_to);
  return inside ? e->per_step : Time::zero();
}

Time large_job_step_overhead(const CollectiveLibrary& library, CollectiveOp op, int nodes, double message_bytes) {
  const LargeJobOverhead& o = library.large_job_overhead;
  if (o.points.empty() || nodes < o.points.front().nodes || message_bytes <= 0.0) return Time::zero();
  if (std::find(o.ops.begin(), o.ops.end(), op) == o.ops.end()) return Time::zero();
  // Per-step seconds x bytes at the node count: log-log between points, the last one beyond.
  auto weight = [](const LargeJobOverheadPoint& p) {
    return p.per_step.seconds() * static_cast<double>(p.message_bytes);
  };
  double w = weight(o.points.back());
  for (std::size_t i = 0; i + 1 < o.points.size(); ++i) {
    const auto& a = o.points[i];
    const auto& b = o.points[i + 1];
    if (nodes < a.nodes || nodes > b.nodes) continue;
    const double f = std::log(static_cast<double>(nodes) / a.nodes) / std::log(static_cast<double>(b.nodes) / a.nodes);
    w = weight(a) > 0 && weight(b) > 0 ? weight(a) * std::pow(weight(b) / weight(a), f)
                                       : weight(a) + f * (weight(b) - weight(a));
    break;
  }
  return Time::from_seconds(w / message_bytes);
}

bool use_collective_library(Machine& machine, std::string_view name) {
  auto& libraries = machine.collective_libraries;
  const auto it =
      std::find_if(libraries.begin(), libraries.end(), [&](const CollectiveLibrary& l) { return l.name == name; });
  if (it == libraries.end()) return false;
  std::rotate(libraries.begin(), it, it + 1);
  return true;
}

Machine without_other_libraries_ranges(Machine machine) {
  if (machine.collective_libraries.empty()) return machine;
  const std::string& in_use = machine.collective_libraries.front().name;
  std::erase_if(machine.uncertainty,
                [&](const UncertaintyRange& r) { return !r.library.empty() && r.library != in_use; });
  return machine;
}

std::string collective_library_names(const Machine& machine) {
  std::string names;
  for (const CollectiveLibrary& l : machine.collective_libraries) names += (names.empty() ? "" : ", ") + l.name;
  return names;
}

namespace {
template <class M>
auto* find_ranged_library(M& machine, const UncertaintyRange& range) {
  auto& libraries = machine.collective_libraries;
  decltype(&libraries.front()) found = nullptr;
  if (libraries.empty()) return found;
  if (range.library.empty()) return &libraries.front();
  for (auto& l : libraries)
    if (l.name == range.library) found = &l;
  return found;
}
template <class L>
auto* find_ranged_protocol(L& library, const UncertaintyRange& range) {
  decltype(&library.protocols.front()) found = nullptr;
  for (auto& p : library.protocols)
    if (!range.protocol.empty() && p.name == range.protocol) found = &p;
  return found;
}
}  // namespace

std::string protocol_name_of_key(std::string_view key) {
  for (const ProtocolKey& p : kProtocolKeys)
    if (key == p.key) return p.name;
  return "";
}
std::string protocol_key_of_name(std::string_view name) {
  for (const ProtocolKey& p : kProtocolKeys)
    if (name == p.name) return p.key;
  return "";
}

CollectiveTerm ranged_term(CollectiveLibrary& library, const UncertaintyRange& range) {
  ProtocolTerms* protocol = ranged_protocol(library, range);
  switch (range.parameter) {
    case UncertainParameter::collective_step_latency:
      return {protocol ? &protocol->step_latency : &library.step_latency, nullptr};
    case UncertainParameter::collective_bandwidth_efficiency:
      return {nullptr, protocol ? &protocol->bandwidth_efficiency : &library.bandwidth_efficiency};
    case UncertainParameter::compute_slowdown: return {nullptr, &library.compute_slowdown};
    case UncertainParameter::collective_eager_overflow:
      return {library.eager_overflow ? &library.eager_overflow->per_step : nullptr, nullptr};
    default: return {};
  }
}

const CollectiveLibrary* ranged_library(const Machine& machine, const UncertaintyRange& range) {
  return find_ranged_library(machine, range);
}
CollectiveLibrary* ranged_library(Machine& machine, const UncertaintyRange& range) {
  return find_ranged_library(machine, range);
}
ProtocolTerms* ranged_protocol(CollectiveLibrary& library, const UncertaintyRange& range) {
  return find_ranged_protocol(library, range);
}
const ProtocolTerms* ranged_protocol(const CollectiveLibrary& library, const UncertaintyRange& range) {
  return find_ranged_protocol(library, range);
}

}  // namespace ws
