#include "sim/calibrate/gemm_probe.hpp"

#include "sim/core/statistics.hpp"

#include "sim/calibrate/thread_cpu_clock.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

namespace ws {
namespace {

using Clock = std::chrono::steady_clock;

enum class Variant { nn, nt, tn };

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double cpu_seconds_since(double start) { return thread_cpu_seconds() - start; }

// C[m x n] = A B with A stored m x k (or k x m for TN) and B k x n (or n x k for NT), row-major.
void call_sgemm(Variant v, int m, int n, int k, const float* a, const float* b, float* c) {
  const bool ta = v == Variant::tn, tb = v == Variant::nt;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
              ta ? m : k, b, tb ? k : n, 0.0f, c, n);
}

double median_rate(Variant v, const GemmGridShape& s, int repetitions, std::vector<float>& a, std::vector<float>& b,
                   std::vector<float>& c) {
  const double flops = 2.0 * s.m * s.n * s.k;
  double start = thread_cpu_seconds();
  call_sgemm(v, s.m, s.n, s.k, a.data(), b.data(), c.data());  // warm-up: caches, page faults
  const double first = std::max(cpu_seconds_since(start), 1e-9);
  const int batch = std::clamp(static_cast<int>(std::ceil(1e-3 / first)), 1, 10000);
  std::vector<double> seconds;
  for (int r = 0; r < std::max(repetitions, 1); ++r) {
    start = thread_cpu_seconds();
    for (int i = 0; i < batch; ++i) call_sgemm(v, s.m, s.n, s.k, a.data(), b.data(), c.data());
    seconds.push_back(cpu_seconds_since(start) / batch);
  }
  return flops / median(seconds);
}

}  // namespace

double GemmShapeRate::best_flops() const { return std::max({nn_flops, nt_flops, tn_flops}); }

const char* GemmShapeRate::best_variant() const {
  if (nn_flops >= nt_flops && nn_flops >= tn_flops) return "NN";
  return nt_flops >= tn_flops ? "NT" : "TN";
}

double GemmMeasurements::best_flops() const {
  double best = 0;
  for (const auto& r : rates) best = std::max(best, r.best_flops());
  return best;
}

GemmGrid default_gemm_grid() {
  GemmGrid grid;
  for (int side : {64, 128, 256, 512, 1024, 2048}) grid.shapes.push_back({side, side, side});
  const int sides[] = {64, 512, 2048};
  for (int m : sides) {
    for (int n : sides) {
      for (int k : sides) {
        if (m == n && n == k) continue;  // the cubes are above
        grid.shapes.push_back({m, n, k});
      }
    }
  }
  grid.repetitions = 5;
  return grid;
}

GemmGrid quick_gemm_grid() {
  GemmGrid grid;
  grid.shapes = {{64, 64, 64}, {128, 128, 128}, {256, 64, 128}};
  grid.repetitions = 1;
  return grid;
}

namespace {

double nn_rate(int side, int repetitions) {
  const GemmGridShape s{side, side, side};
  const auto n = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
  std::vector<float> a(n), b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = 0.5f + static_cast<float>(i % 97) / 200.0f;
  for (std::size_t i = 0; i < n; ++i) b[i] = 0.5f + static_cast<float>(i % 89) / 200.0f;
  // Batches of >= 20 ms so that the cores overlap for most of each one's timing.
  std::vector<double> rates;
  for (int r = 0; r < std::max(repetitions, 1); ++r) {
    const double start = thread_cpu_seconds();
    int calls = 0;
    while (thread_cpu_seconds() - start < 0.02 || calls == 0) {
      call_sgemm(Variant::nn, s.m, s.n, s.k, a.data(), b.data(), c.data());
      ++calls;
    }
    rates.push_back(2.0 * side * side * side * calls / cpu_seconds_since(start));
  }
  return median(rates);
}

}  // namespace

BusyNodeGemm measure_busy_node_gemm(int side, int threads, int repetitions) {
  openblas_set_num_threads(1);
  BusyNodeGemm out;
  out.side = side;
  out.threads = std::max(threads, 1);
  out.alone_flops = nn_rate(side, repetitions);
  std::vector<double> each(static_cast<std::size_t>(out.threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < out.threads; ++t)
    workers.emplace_back([&, t] { each[static_cast<std::size_t>(t)] = nn_rate(side, repetitions); });
  for (auto& w : workers) w.join();
  double sum = 0;
  for (double e : each) sum += e;
  out.each_flops = sum / out.threads;
  return out;
}

GemmMeasurements measure_gemm(const GemmGrid& grid) {
  openblas_set_num_threads(1);
  GemmMeasurements out;
  out.grid = grid;
  out.blas = openblas_get_config();
  const auto start = Clock::now();
  for (const auto& s : grid.shapes) {
    const auto size = [](int rows, int cols) { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); };
    // Values in [0.5, 1): no denormals, no zeros the kernel could skip.
    std::vector<float> a(size(s.m, s.k)), b(size(s.k, s.n)), c(size(s.m, s.n));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.5f + static_cast<float>(i % 97) / 200.0f;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.5f + static_cast<float>(i % 89) / 200.0f;
    GemmShapeRate rate{s.m, s.n, s.k, 0, 0, 0};
    rate.nn_flops = median_rate(Variant::nn, s, grid.repetitions, a, b, c);
    rate.nt_flops = median_rate(Variant::nt, s, grid.repetitions, a, b, c);
    rate.tn_flops = median_rate(Variant::tn, s, grid.repetitions, a, b, c);
    out.rates.push_back(rate);
  }
  out.wall_seconds = seconds_since(start);
  return out;
}

}  // namespace ws
