#include "sim/calibrate/elementwise_probe.hpp"

#include "sim/core/statistics.hpp"

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
#include "sim/calibrate/thread_cpu_clock.hpp"

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

// Median thread-CPU seconds of one call over `repetitions` timed calls after a warm-up (the
// median for the reason gemm_probe.hpp gives).
double median_seconds(int repetitions, const std::function<void()>& call) {
  call();
  std::vector<double> seconds;
  for (int i = 0; i < std::max(repetitions, 1); ++i) {
    const double start = thread_cpu_seconds();
    call();
    seconds.push_back(thread_cpu_seconds() - start);
  }
  return median(seconds);
}

void set(ElementwiseMeasurements& m, ElementwiseKernel k, double seconds, double elements) {
  m.seconds[static_cast<std::size_t>(k)] = seconds;
  m.elements[static_cast<std::size_t>(k)] = elements;
}

}  // namespace

ElementwiseShapes default_elementwise_shapes() {
  ElementwiseShapes s;
  s.gelu_elements = 1024LL * 2048;  // 4 sequences of 256 tokens x the MLP's 4h at h = 512
  s.layer_norm_rows = 1024, s.layer_norm_width = 512;
  s.attention_sequences = 4, s.attention_seq = 256, s.attention_heads = 8, s.attention_head_dim = 64;
  s.cross_entropy_rows = 1024, s.cross_entropy_vocabulary = 8192;
  s.repetitions = 5;
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

ElementwiseMeasurements measure_elementwise(const ElementwiseShapes& s) {
  const auto wall_start = std::chrono::steady_clock::now();
  openblas_set_num_threads(1);  // attention's GEMMs, as the engine runs them: one rank per core
  ElementwiseMeasurements m;
  m.shapes = s;
  const int reps = s.repetitions;

  {
    const auto n = static_cast<std::size_t>(s.gelu_elements);
    const std::vector<float> x = filled(n, 1), dy = filled(n, 2);
    std::vector<float> y(n), t(n), dx(n);
    set(m, ElementwiseKernel::gelu_forward, median_seconds(reps, [&] { gelu_forward(x.data(), y.data(), t.data(), n); }),
        static_cast<double>(n));
    set(m, ElementwiseKernel::gelu_backward,
        median_seconds(reps, [&] { gelu_backward(x.data(), t.data(), dy.data(), dx.data(), n); }), static_cast<double>(n));
  }
  {
    const int rows = s.layer_norm_rows, width = s.layer_norm_width;
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
    const std::vector<float> x = filled(n, 3), dy = filled(n, 4), gamma = filled(static_cast<std::size_t>(width), 5),
                             beta = filled(static_cast<std::size_t>(width), 6);
    std::vector<float> y(n), dx(n), mean(static_cast<std::size_t>(rows)), rstd(static_cast<std::size_t>(rows)),
        dgamma(static_cast<std::size_t>(width)), dbeta(static_cast<std::size_t>(width));
    set(m, ElementwiseKernel::layer_norm_forward, median_seconds(reps, [&] {
          layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows, width, width);
        }),
        static_cast<double>(n));
    set(m, ElementwiseKernel::layer_norm_backward, median_seconds(reps, [&] {
          layer_norm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dgamma.data(),
                              dbeta.data(), rows, width, width);
        }),
        static_cast<double>(n));
  }
  {
    const AttentionShape a{s.attention_sequences, s.attention_seq, s.attention_heads, s.attention_head_dim};
    const auto tokens = static_cast<std::size_t>(a.sequences) * static_cast<std::size_t>(a.seq);
    const auto width = static_cast<std::size_t>(a.width());
    const std::vector<float> qkv = filled(tokens * 3 * width, 7), dout = filled(tokens * width, 8);
    std::vector<float> out(tokens * width), probs(a.probs_size()), dqkv(tokens * 3 * width),
        dprobs(static_cast<std::size_t>(a.seq) * static_cast<std::size_t>(a.seq));
    const auto elements = static_cast<double>(a.probs_size());
    set(m, ElementwiseKernel::softmax_forward,
        median_seconds(reps, [&] { attention_forward(a, qkv.data(), out.data(), probs.data()); }), elements);
    set(m, ElementwiseKernel::softmax_backward, median_seconds(reps, [&] {
          attention_backward(a, qkv.data(), probs.data(), dout.data(), dqkv.data(), dprobs.data());
        }),
        elements);
  }
  {
    const int rows = s.cross_entropy_rows, vocabulary = s.cross_entropy_vocabulary;
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(vocabulary);
    const std::vector<float> logits = filled(n, 9);
    std::vector<int> targets(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < targets.size(); ++r) targets[r] = static_cast<int>((r * 7919) % static_cast<std::size_t>(vocabulary));
    std::vector<float> work(n);
    // The forward overwrites its input with probabilities: restore the logits first, untimed.
    double forward = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= std::max(reps, 1); ++i) {
      work = logits;
      const double start = thread_cpu_seconds();
      cross_entropy_forward(work.data(), targets.data(), rows, vocabulary);
      if (i > 0) forward = std::min(forward, thread_cpu_seconds() - start);
    }
    set(m, ElementwiseKernel::cross_entropy_forward, forward, static_cast<double>(n));
    double backward = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= std::max(reps, 1); ++i) {
      work = logits;  // stands in for the probabilities: the kernel's work does not depend on them
      const double start = thread_cpu_seconds();
      cross_entropy_backward(work.data(), targets.data(), rows, vocabulary, 1.0f / static_cast<float>(rows));
      if (i > 0) backward = std::min(backward, thread_cpu_seconds() - start);
    }
    set(m, ElementwiseKernel::cross_entropy_backward, backward, static_cast<double>(n));
  }
  m.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return m;
}

}  // namespace ws
