// Every (Gdata, Gx, Gy, Gz) whose product is the device count, each marked valid or with the
// reason it cannot run the model and batch (divisibility), in a fixed order.
#pragma once

#include <string>
#include <vector>

#include "workload/layout.hpp"
#include "workload/model.hpp"

namespace ws {

struct LayoutCandidate {
  Layout layout;
  bool valid = false;
  std::string reason;  // empty when valid, else e.g. "hidden 4096 not divisible by Gx*... "
};

// All ordered factorizations devices = Gdata*Gx*Gy*Gz (not only powers of two), sorted
// lexicographically by (data, x, y, z).
std::vector<LayoutCandidate> enumerate_layouts(const ModelSpec& model, const Batch& batch, int devices);

// Why the layout's pipeline (stages, chunks, micro-batches) cannot run `model` with `batch`, or
// empty: whole blocks per model chunk, the interleaved schedule's micro-batches in groups of pp,
// no Z sharding with stages. Part of layout_problem.
std::string pipeline_problem(const ModelSpec& model, const Batch& batch, const Layout& layout);

// Why `layout` cannot run `model` with `batch`, or empty when it can. Shared with the engine.
std::string layout_problem(const ModelSpec& model, const Batch& batch, const Layout& layout);

}  // namespace ws
