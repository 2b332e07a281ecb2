#include "harness/calibrate/gemm_probe.hpp"

#include "base/statistics.hpp"

#include "harness/calibrate/thread_cpu_clock.hpp"

#include <cblas.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>
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
  grid.repetitions = 15;  // passes of ~1.5 s here: the medians span ~25 s of the host's drift
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

BusyNodeGemm fastest_busy_node(std::span<const BusyNodeGemm> passes) {
  BusyNodeGemm fastest;
  if (passes.empty()) return fastest;
  fastest.side = passes.front().side;
  fastest.threads = passes.front().threads;
  fastest.passes = 0;
  for (const BusyNodeGemm& p : passes) {
    fastest.alone_flops = std::max(fastest.alone_flops, p.alone_flops);
    fastest.each_flops = std::max(fastest.each_flops, p.each_flops);
    fastest.passes += p.passes;
  }
  return fastest;
}

CoreVariability quietest_variability(std::vector<CoreVariability> passes) {
  if (passes.empty()) return {};
  std::size_t quietest = 0;
  for (std::size_t i = 1; i < passes.size(); ++i)
    if (passes[i].barrier_wait() < passes[quietest].barrier_wait()) quietest = i;
  CoreVariability out = std::move(passes[quietest]);
  out.passes = static_cast<int>(passes.size());
  return out;
}

std::vector<double> CoreVariability::median_rates() const {
  std::vector<double> rates;
  const double flops = 2.0 * side * side * static_cast<double>(side);
  for (const auto& batches : seconds_per_call) rates.push_back(flops / std::max(median(batches), 1e-12));
  return rates;
}

double CoreVariability::speed_spread() const { return coefficient_of_variation(median_rates()); }

double CoreVariability::noise() const {
  // Pooled over the cores, each round relative to its core's median: one core's few rounds would
  // let a single stall decide the figure.
  std::vector<double> relative;
  for (const auto& batches : seconds_per_call) {
    const double typical = median(batches);
    if (typical <= 0) continue;
    for (const double s : batches) relative.push_back(s / typical);
  }
  return coefficient_of_variation(relative);
}

double CoreVariability::barrier_wait() const {
  // Per round: the slowest core's time over the mean core's, less 1; then the mean over the rounds.
  const std::size_t rounds = seconds_per_call.empty() ? 0 : seconds_per_call.front().size();
  if (rounds == 0 || seconds_per_call.size() < 2) return 0.0;
  double sum = 0.0;
  for (std::size_t r = 0; r < rounds; ++r) {
    double slowest = 0.0, total = 0.0;
    for (const auto& core : seconds_per_call) {
      slowest = std::max(slowest, core[r]);
      total += core[r];
    }
    const double mean = total / static_cast<double>(seconds_per_call.size());
    if (mean > 0) sum += slowest / mean - 1.0;
  }
  return sum / static_cast<double>(rounds);
}

CoreVariability measure_core_variability(int side, int threads, int rounds) {
  openblas_set_num_threads(1);
  CoreVariability out;
  out.side = side;
  out.threads = std::max(threads, 1);
  out.seconds_per_call.assign(static_cast<std::size_t>(out.threads), {});
  // Every round, every core does the same number of calls and then waits for the others, as ranks
  // between two collectives do: no core runs on alone (faster, its neighbours idle) after the others
  // have finished, which a fixed time per core allowed and which made a loaded host's cores look unequal.
  std::vector<double> warm_call(static_cast<std::size_t>(out.threads), 0.0);
  std::barrier sync(out.threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < out.threads; ++t) {
    workers.emplace_back([&, t] {
      const auto n = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
      std::vector<float> a(n), b(n), c(n);
      for (std::size_t i = 0; i < n; ++i) a[i] = 0.5f + static_cast<float>(i % 97) / 200.0f;
      for (std::size_t i = 0; i < n; ++i) b[i] = 0.5f + static_cast<float>(i % 89) / 200.0f;
      // Warm-up: the first tenth of a second of all cores busy runs slower on hosts seen here (up to 2.7x
      // per call on the 2-core VM, alternating between its cores) before it settles.
      sync.arrive_and_wait();
      const auto warm = Clock::now();
      int warm_calls = 0;
      while (seconds_since(warm) < 0.2 || warm_calls == 0) {
        call_sgemm(Variant::nn, side, side, side, a.data(), b.data(), c.data());
        ++warm_calls;
      }
      warm_call[static_cast<std::size_t>(t)] = seconds_since(warm) / warm_calls;
      sync.arrive_and_wait();
      // The same count on every core: ~10 ms of the median core's warm-up pace.
      const int calls = std::max(1, static_cast<int>(std::lround(0.01 / std::max(median(warm_call), 1e-9))));
      auto& mine = out.seconds_per_call[static_cast<std::size_t>(t)];
      for (int round = 0; round < std::max(rounds, 1); ++round) {
        sync.arrive_and_wait();
        const auto start = Clock::now();
        for (int call = 0; call < calls; ++call) call_sgemm(Variant::nn, side, side, side, a.data(), b.data(), c.data());
        mine.push_back(seconds_since(start) / calls);
      }
    });
  }
  for (auto& w : workers) w.join();
  return out;
}

GemmGridProbes::GemmGridProbes(GemmGrid grid) : grid_(std::move(grid)) {
  std::size_t a = 0, b = 0, c = 0;
  const auto size = [](int rows, int cols) { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); };
  for (const auto& s : grid_.shapes) {
    a = std::max(a, size(s.m, s.k)), b = std::max(b, size(s.k, s.n)), c = std::max(c, size(s.m, s.n));
  }
  // Values in [0.5, 1): no denormals, no zeros the kernel could skip.
  a_.resize(a), b_.resize(b), c_.resize(c);
  for (std::size_t i = 0; i < a_.size(); ++i) a_[i] = 0.5f + static_cast<float>(i % 97) / 200.0f;
  for (std::size_t i = 0; i < b_.size(); ++i) b_[i] = 0.5f + static_cast<float>(i % 89) / 200.0f;
  batch_.assign(3 * grid_.shapes.size(), 0);
}

std::vector<TimedProbe> GemmGridProbes::probes() {
  openblas_set_num_threads(1);
  std::vector<TimedProbe> out;
  for (std::size_t i = 0; i < grid_.shapes.size(); ++i) {
    for (const Variant v : {Variant::nn, Variant::nt, Variant::tn}) {
      const std::size_t index = out.size();
      out.emplace_back([this, v, index, s = grid_.shapes[i]] {
        int& batch = batch_[index];
        const double start = thread_cpu_seconds();
        if (batch == 0) {
          call_sgemm(v, s.m, s.n, s.k, a_.data(), b_.data(), c_.data());
          const double first = std::max(cpu_seconds_since(start), 1e-9);
          batch = std::clamp(static_cast<int>(std::ceil(1e-3 / first)), 1, 10000);
          return first;
        }
        for (int call = 0; call < batch; ++call) call_sgemm(v, s.m, s.n, s.k, a_.data(), b_.data(), c_.data());
        return cpu_seconds_since(start) / batch;
      });
    }
  }
  return out;
}

GemmMeasurements GemmGridProbes::measurements(const std::vector<double>& seconds_per_call, double wall_seconds) const {
  GemmMeasurements out;
  out.grid = grid_;
  out.blas = openblas_get_config();
  out.wall_seconds = wall_seconds;
  for (std::size_t i = 0; i < grid_.shapes.size(); ++i) {
    const auto& s = grid_.shapes[i];
    const double flops = 2.0 * s.m * s.n * s.k;
    const auto rate = [&](std::size_t variant) { return flops / std::max(seconds_per_call.at(3 * i + variant), 1e-12); };
    out.rates.push_back({s.m, s.n, s.k, rate(0), rate(1), rate(2)});
  }
  return out;
}

GemmMeasurements measure_gemm(const GemmGrid& grid) {
  const auto start = Clock::now();
  GemmGridProbes probes(grid);
  const auto seconds = interleaved_median_seconds(probes.probes(), grid.repetitions);
  return probes.measurements(seconds, seconds_since(start));
}

}  // namespace ws
