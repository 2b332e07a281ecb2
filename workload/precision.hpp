// The arithmetic a step trains in: bf16 or fp16 mixed precision (2-byte weights, activations and
// gradients), or fp32 (the CPU engine's). Shared by the schedule (bytes moved) and the machine
// files (the device peak of each).
#pragma once

namespace ws {

enum class Precision { bf16, fp16, fp32 };

constexpr const char* to_string(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp32: return "fp32";
  }
  return "?";
}

// Bytes of one element of weights, activations and gradients.
constexpr int element_bytes(Precision p) { return p == Precision::fp32 ? 4 : 2; }

}  // namespace ws
