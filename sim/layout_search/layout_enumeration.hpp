// Every (Gdata, Gx, Gy, Gz) whose product is the device count, each marked valid or with the
// reason it cannot run the model and batch (divisibility), in a fixed order.
#pragma once

#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "workload/pipeline.hpp"

namespace ws {

struct LayoutCandidate {
  Layout layout;
  bool valid = false;
  std::string reason;  // empty when valid, else e.g. "hidden 4096 not divisible by Gx*... "
};

// All ordered factorizations devices = Gdata*Gx*Gy*Gz (not only powers of two), sorted
// lexicographically by (data, x, y, z).
std::vector<LayoutCandidate> enumerate_layouts(const ModelSpec& model, const Batch& batch, int devices);

// Every layout of `strategy` on `devices`, each marked valid or with its reason, in a fixed order:
//  - four_d: enumerate_layouts;
//  - megatron: tensor parallelism tp dividing a node's `devices_per_node` (Megatron-LM keeps it on
//    NVLink / Infinity Fabric), pipeline stages pp (an uneven split of the layers gives the first
//    stages one more), dp the rest; micro-batches of 1, 2 or 4 sequences (mb = sequences / (dp x
//    size)); 1F1B, and the interleaved schedule over 2 chunks where the layers divide; sequence
//    parallelism off and (tp > 1) on; the distributed optimizer (zero=1) wherever dp > 1;
//  - fsdp: tp within a node as above, dp_replicate any divisor of the rest, dp_shard the rest.
std::vector<LayoutCandidate> enumerate_strategy_layouts(const ModelSpec& model, const Batch& batch, int devices,
                                                        Strategy strategy, int devices_per_node);

// Why `layout` cannot run `model` with `batch`, or empty when it can: the shapes' divisibility, then
// pipeline_problem (workload/pipeline.hpp).
std::string layout_problem(const ModelSpec& model, const Batch& batch, const Layout& layout);

}  // namespace ws
