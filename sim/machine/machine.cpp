#include "sim/machine/machine.hpp"

namespace ws {

FlopRate peak(const DeviceSpec& device, Precision precision) {
  switch (precision) {
    case Precision::bf16: return device.peak_bf16;
    case Precision::fp16: return device.peak_fp16;
    case Precision::fp32: return device.peak_fp32;
  }
  return device.peak_fp32;
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp32: return "fp32";
  }
  return "?";
}

const char* to_string(RoutingPolicy r) {
  switch (r) {
    case RoutingPolicy::minimal: return "minimal";
    case RoutingPolicy::non_minimal: return "non-minimal";
    case RoutingPolicy::adaptive: return "adaptive";
  }
  return "?";
}

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
  return parameter == UncertainParameter::collective_step_latency || parameter == UncertainParameter::switch_latency;
}

const char* to_string(UncertainParameter p) {
  switch (p) {
    case UncertainParameter::gemm_efficiency_scale: return "gemm_efficiency_scale";
    case UncertainParameter::collective_step_latency: return "collective_step_latency";
    case UncertainParameter::collective_bandwidth_efficiency: return "collective_bandwidth_efficiency";
    case UncertainParameter::global_links_per_group_pair: return "global_links_per_group_pair";
    case UncertainParameter::switch_latency: return "switch_latency";
  }
  return "?";
}

}  // namespace ws
