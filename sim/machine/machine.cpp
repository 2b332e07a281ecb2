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

}  // namespace ws
