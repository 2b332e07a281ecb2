#include "harness/calibrate/elementwise_probe.hpp"

#include "base/statistics.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "engine/kernels/attention.hpp"
#include "engine/kernels/cross_entropy.hpp"
#include "engine/kernels/gelu.hpp"
#include "engine/kernels/layer_norm.hpp"
#include "engine/kernels/rms_norm.hpp"
#include "engine/kernels/swiglu.hpp"
#include "harness/calibrate/thread_cpu_clock.hpp"

namespace ws {
namespace {

// Deterministic normally distributed inputs. Values matter: libm's tanhf and expf take longer
// paths for larger arguments (GELU forward on this project's 2-core VM: 36 ms per 2 M elements at
// standard deviation 0.05, 41 ms at 0.5, 48 ms at 1, 55 ms at 3), so inputs follow what the kernels
// see in the engine; the default 0.45 is the MLP-up output of a GPT at initialisation (unit-variance
// layer-norm output times N(0, 0.02) weights over a fan-in of 512: 0.02 x sqrt(512)).
std::vector<float> filled(std::size_t n, unsigned seed, float standard_deviation = 0.45f) {
  std::vector<float> v(n);
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, standard_deviation);
  for (float& e : v) e = normal(generator);
  return v;
}

}  // namespace

ElementwiseShapes default_elementwise_shapes() {
  ElementwiseShapes s;
  s.gelu_elements = 1024LL * 2048;  // 4 sequences of 256 tokens x the MLP's 4h at h = 512
  s.layer_norm_rows = 1024, s.layer_norm_width = 512;
  s.attention_sequences = 4, s.attention_seq = 256, s.attention_heads = 8, s.attention_head_dim = 64;
  s.cross_entropy_rows = 1024, s.cross_entropy_vocabulary = 8192;
  s.repetitions = 15;
  return s;
}

ElementwiseShapes quick_elementwise_shapes() {
  ElementwiseShapes s;
  s.gelu_elements = 4096;
  s.layer_norm_rows = 16, s.layer_norm_width = 64;
  s.attention_sequences = 1, s.attention_seq = 16, s.attention_heads = 2, s.attention_head_dim = 8;
  s.cross_entropy_rows = 16, s.cross_entropy_vocabulary = 128;
  s.repetitions = 1;
  return s;
}

struct ElementwiseProbes::Buffers {
  // GELU
  std::vector<float> gelu_x, gelu_dy, gelu_y, gelu_t, gelu_dx;
  // layer norm (and RMSNorm, on the same rows)
  std::vector<float> ln_x, ln_dy, ln_gamma, ln_beta, ln_y, ln_dx, ln_mean, ln_rstd, ln_dgamma, ln_dbeta, rms_sums;
  // SwiGLU: layer_norm_rows rows of gelu_elements / layer_norm_rows outputs, their gate and up values
  std::vector<float> swiglu_in, swiglu_dy, swiglu_y, swiglu_dx;
  // attention
  std::vector<float> qkv, dout, att_out, probs, dqkv, dprobs;
  // cross-entropy
  std::vector<float> logits, work;
  std::vector<int> targets;
};

ElementwiseProbes::ElementwiseProbes(const ElementwiseShapes& s) : shapes_(s), buffers_(std::make_unique<Buffers>()) {
  Buffers& b = *buffers_;
  const auto gelu = static_cast<std::size_t>(s.gelu_elements);
  b.gelu_x = filled(gelu, 1), b.gelu_dy = filled(gelu, 2);
  b.gelu_y.resize(gelu), b.gelu_t.resize(gelu), b.gelu_dx.resize(gelu);

  const auto rows = static_cast<std::size_t>(s.layer_norm_rows), width = static_cast<std::size_t>(s.layer_norm_width);
  b.ln_x = filled(rows * width, 3), b.ln_dy = filled(rows * width, 4), b.ln_gamma = filled(width, 5),
  b.ln_beta = filled(width, 6);
  b.ln_y.resize(rows * width), b.ln_dx.resize(rows * width), b.ln_mean.resize(rows), b.ln_rstd.resize(rows);
  b.ln_dgamma.resize(width), b.ln_dbeta.resize(width), b.rms_sums.resize(rows);
  b.swiglu_in = filled(2 * gelu, 10), b.swiglu_dy = filled(gelu, 11);
  b.swiglu_y.resize(gelu), b.swiglu_dx.resize(2 * gelu);

  const AttentionShape a{s.attention_sequences, s.attention_seq, s.attention_heads, s.attention_head_dim};
  const auto tokens = static_cast<std::size_t>(a.sequences) * static_cast<std::size_t>(a.seq);
  const auto att_width = static_cast<std::size_t>(a.width());
  b.qkv = filled(tokens * 3 * att_width, 7), b.dout = filled(tokens * att_width, 8);
  b.att_out.resize(tokens * att_width), b.probs.resize(a.probs_size()), b.dqkv.resize(tokens * 3 * att_width);
  b.dprobs.resize(static_cast<std::size_t>(a.seq) * static_cast<std::size_t>(a.seq));

  const auto ce = static_cast<std::size_t>(s.cross_entropy_rows) * static_cast<std::size_t>(s.cross_entropy_vocabulary);
  b.logits = filled(ce, 9);
  b.work.resize(ce);
  b.targets.resize(static_cast<std::size_t>(s.cross_entropy_rows));
  for (std::size_t r = 0; r < b.targets.size(); ++r) {
    b.targets[r] = static_cast<int>((r * 7919) % static_cast<std::size_t>(s.cross_entropy_vocabulary));
  }
}

ElementwiseProbes::~ElementwiseProbes() = default;

std::vector<TimedProbe> ElementwiseProbes::probes() {
  openblas_set_num_threads(1);  // attention's GEMMs, as the engine runs them: one rank per core
  Buffers& b = *buffers_;
  const ElementwiseShapes s = shapes_;
  const auto timed = [](auto&& call) {
    return [call]() {
      const double start = thread_cpu_seconds();
      call();
      return thread_cpu_seconds() - start;
    };
  };
  const AttentionShape a{s.attention_sequences, s.attention_seq, s.attention_heads, s.attention_head_dim};
  std::vector<TimedProbe> out(kElementwiseKernels);
  const auto at = [&out](ElementwiseKernel k) -> TimedProbe& { return out[static_cast<std::size_t>(k)]; };
  at(ElementwiseKernel::gelu_forward) =
      timed([&b] { gelu_forward(b.gelu_x.data(), b.gelu_y.data(), b.gelu_t.data(), b.gelu_x.size()); });
  at(ElementwiseKernel::gelu_backward) = timed(
      [&b] { gelu_backward(b.gelu_x.data(), b.gelu_t.data(), b.gelu_dy.data(), b.gelu_dx.data(), b.gelu_x.size()); });
  at(ElementwiseKernel::layer_norm_forward) = timed([&b, s] {
    layer_norm_forward(b.ln_x.data(), b.ln_gamma.data(), b.ln_beta.data(), b.ln_y.data(), b.ln_mean.data(),
                       b.ln_rstd.data(), s.layer_norm_rows, s.layer_norm_width, s.layer_norm_width);
  });
  at(ElementwiseKernel::layer_norm_backward) = timed([&b, s] {
    layer_norm_backward(b.ln_dy.data(), b.ln_x.data(), b.ln_gamma.data(), b.ln_mean.data(), b.ln_rstd.data(),
                        b.ln_dx.data(), b.ln_dgamma.data(), b.ln_dbeta.data(), s.layer_norm_rows, s.layer_norm_width,
                        s.layer_norm_width);
  });
  at(ElementwiseKernel::softmax_forward) =
      timed([&b, a] { attention_forward(a, b.qkv.data(), b.att_out.data(), b.probs.data()); });
  at(ElementwiseKernel::softmax_backward) = timed([&b, a] {
    attention_backward(a, b.qkv.data(), b.probs.data(), b.dout.data(), b.dqkv.data(), b.dprobs.data());
  });
  const int swiglu_rows = s.layer_norm_rows, swiglu_width = static_cast<int>(s.gelu_elements / s.layer_norm_rows);
  at(ElementwiseKernel::swiglu_forward) = timed(
      [&b, swiglu_rows, swiglu_width] { swiglu_forward(b.swiglu_in.data(), b.swiglu_y.data(), swiglu_rows, swiglu_width); });
  at(ElementwiseKernel::swiglu_backward) = timed([&b, swiglu_rows, swiglu_width] {
    swiglu_backward(b.swiglu_in.data(), b.swiglu_dy.data(), b.swiglu_dx.data(), swiglu_rows, swiglu_width);
  });
  // RMSNorm whole, as one rank runs it: both stages of each pass (the sums need no other rank).
  at(ElementwiseKernel::rms_norm_forward) = timed([&b, s] {
    rms_norm_row_sums(b.ln_x.data(), b.ln_rstd.data(), s.layer_norm_rows, s.layer_norm_width);
    rms_norm_normalize(b.ln_x.data(), b.ln_gamma.data(), b.ln_y.data(), b.ln_rstd.data(), s.layer_norm_rows,
                       s.layer_norm_width, s.layer_norm_width);
  });
  at(ElementwiseKernel::rms_norm_backward) = timed([&b, s] {
    rms_norm_backward_sums(b.ln_dy.data(), b.ln_x.data(), b.ln_gamma.data(), b.ln_rstd.data(), b.rms_sums.data(),
                           b.ln_dgamma.data(), s.layer_norm_rows, s.layer_norm_width);
    rms_norm_backward_dx(b.ln_dy.data(), b.ln_x.data(), b.ln_gamma.data(), b.ln_rstd.data(), b.rms_sums.data(),
                         b.ln_dx.data(), s.layer_norm_rows, s.layer_norm_width, s.layer_norm_width);
  });
  // The forward overwrites its input with probabilities: the logits are restored first, untimed.
  at(ElementwiseKernel::cross_entropy_forward) = [&b, s] {
    b.work = b.logits;
    const double start = thread_cpu_seconds();
    cross_entropy_forward(b.work.data(), b.targets.data(), s.cross_entropy_rows, s.cross_entropy_vocabulary);
    return thread_cpu_seconds() - start;
  };
  at(ElementwiseKernel::cross_entropy_backward) = [&b, s] {
    b.work = b.logits;  // stands in for the probabilities: the kernel's work does not depend on them
    const double start = thread_cpu_seconds();
    cross_entropy_backward(b.work.data(), b.targets.data(), s.cross_entropy_rows, s.cross_entropy_vocabulary,
                           1.0f / static_cast<float>(s.cross_entropy_rows));
    return thread_cpu_seconds() - start;
  };
  return out;
}

ElementwiseMeasurements ElementwiseProbes::measurements(const std::vector<double>& seconds_per_call,
                                                        double wall_seconds) const {
  const ElementwiseShapes& s = shapes_;
  ElementwiseMeasurements m;
  m.shapes = s;
  m.wall_seconds = wall_seconds;
  const AttentionShape a{s.attention_sequences, s.attention_seq, s.attention_heads, s.attention_head_dim};
  const auto elements = [&](ElementwiseKernel k) -> double {
    switch (k) {
      case ElementwiseKernel::gelu_forward:
      case ElementwiseKernel::gelu_backward:
        return static_cast<double>(s.gelu_elements);
      case ElementwiseKernel::swiglu_forward:
      case ElementwiseKernel::swiglu_backward:
        return static_cast<double>(s.gelu_elements / s.layer_norm_rows) * s.layer_norm_rows;
      case ElementwiseKernel::layer_norm_forward:
      case ElementwiseKernel::layer_norm_backward:
      case ElementwiseKernel::rms_norm_forward:
      case ElementwiseKernel::rms_norm_backward:
        return static_cast<double>(s.layer_norm_rows) * s.layer_norm_width;
      case ElementwiseKernel::softmax_forward:
      case ElementwiseKernel::softmax_backward:
        return static_cast<double>(a.probs_size());
      case ElementwiseKernel::cross_entropy_forward:
      case ElementwiseKernel::cross_entropy_backward:
        return static_cast<double>(s.cross_entropy_rows) * s.cross_entropy_vocabulary;
    }
    return 0.0;
  };
  for (int i = 0; i < kElementwiseKernels; ++i) {
    const auto k = static_cast<std::size_t>(i);
    m.seconds[k] = seconds_per_call.at(k);
    m.elements[k] = elements(static_cast<ElementwiseKernel>(i));
  }
  return m;
}

ElementwiseMeasurements measure_elementwise(const ElementwiseShapes& s) {
  const auto start = std::chrono::steady_clock::now();
  ElementwiseProbes probes(s);
  const auto seconds = interleaved_median_seconds(probes.probes(), s.repetitions);
  return probes.measurements(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace ws
