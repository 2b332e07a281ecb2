// Times the engine's own element-wise kernels (engine/kernels: GELU, layer norm, attention,
// cross-entropy) on one core in fp32, forward and backward, at shapes like the engine's: what the
// step simulator needs where a kernel's arithmetic (tanh, exp, a reduction per row), not its
// memory traffic, sets its time. Attention is timed whole; its softmax share is what remains after
// the GEMMs the machine's table predicts (calibrated_machine.cpp).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "workload/elementwise_kernel.hpp"
#include "harness/calibrate/interleaved_timing.hpp"

namespace ws {

struct ElementwiseShapes {
  long long gelu_elements = 0;
  int layer_norm_rows = 0, layer_norm_width = 0;
  int attention_sequences = 0, attention_seq = 0, attention_heads = 0, attention_head_dim = 0;
  int cross_entropy_rows = 0, cross_entropy_vocabulary = 0;
  int repetitions = 5;  // timed calls after one warm-up; the median counts
};

struct ElementwiseMeasurements {
  ElementwiseShapes shapes;
  // Median seconds per call of each kernel, thread CPU time. softmax_* hold the whole attention
  // kernel (GEMMs included).
  std::array<double, kElementwiseKernels> seconds{};
  // Elements each call processes (the step schedule's count for that kernel).
  std::array<double, kElementwiseKernels> elements{};
  double wall_seconds = 0;
};

// Shapes of the validation matrix's runs (hidden 256-512, sequence 256): seconds on one core.
ElementwiseShapes default_elementwise_shapes();
// Tiny shapes, one repetition: for tests.
ElementwiseShapes quick_elementwise_shapes();

// One probe per kernel (in ElementwiseKernel order), for interleaved_median_seconds; each owns
// inputs drawn like the engine's (elementwise_probe.cpp says why values matter).
class ElementwiseProbes {
 public:
  explicit ElementwiseProbes(const ElementwiseShapes& shapes);
  ~ElementwiseProbes();
  ElementwiseProbes(const ElementwiseProbes&) = delete;
  ElementwiseProbes& operator=(const ElementwiseProbes&) = delete;
  std::vector<TimedProbe> probes();
  ElementwiseMeasurements measurements(const std::vector<double>& seconds_per_call, double wall_seconds) const;

 private:
  struct Buffers;
  ElementwiseShapes shapes_;
  std::unique_ptr<Buffers> buffers_;
};

// The kernels alone: their probes interleaved over shapes.repetitions passes.
ElementwiseMeasurements measure_elementwise(const ElementwiseShapes& shapes);

}  // namespace ws
