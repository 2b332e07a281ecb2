#include "harness/calibrate/memory_probe.hpp"

#include "harness/calibrate/thread_cpu_clock.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

namespace ws {
namespace {

using Clock = std::chrono::steady_clock;

struct TriadArrays {
  std::vector<double> a, b, c;
  explicit TriadArrays(std::size_t n) : a(n, 0.0), b(n, 1.0), c(n, 2.0) {}
};

// Wall time for the all-cores run (CPU time would also credit passes whose threads did not run at
// the same time); thread CPU time for one core alone.
double triad_seconds(TriadArrays& t, bool cpu_time) {
  const double scalar = 3.0;
  const std::size_t n = t.a.size();
  double* a = t.a.data();
  const double* b = t.b.data();
  const double* c = t.c.data();
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
  if (cpu_time) return thread_cpu_seconds() - cpu_start;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `threads` triads at once, `repetitions` + 1 times; returns the best pass time (slowest
// thread of each pass).
double best_parallel_pass(std::size_t elements_per_thread, int threads, int repetitions) {
  std::vector<std::vector<double>> seconds(static_cast<std::size_t>(threads));
  std::barrier sync(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      TriadArrays arrays(elements_per_thread);  // allocated and first-touched by its own thread
      auto& mine = seconds[static_cast<std::size_t>(t)];
      for (int r = 0; r <= repetitions; ++r) {
        sync.arrive_and_wait();
        mine.push_back(triad_seconds(arrays, threads == 1));
      }
      // A read the compiler must honour, so the stores of the last pass are not dead.
      [[maybe_unused]] volatile double keep = arrays.a[elements_per_thread / 2];
    });
  }
  for (auto& w : workers) w.join();
  double best = 0;
  for (int r = 1; r <= repetitions; ++r) {  // pass 0 is the warm-up
    double slowest = 0;
    for (const auto& s : seconds) slowest = std::max(slowest, s[static_cast<std::size_t>(r)]);
    best = r == 1 ? slowest : std::min(best, slowest);
  }
  return best;
}

}  // namespace

MemoryMeasurements measure_memory_bandwidth(double array_bytes, int threads, int repetitions) {
  MemoryMeasurements out;
  out.array_bytes = array_bytes;
  out.threads = std::max(threads, 1);
  out.repetitions = std::max(repetitions, 1);
  const auto elements = static_cast<std::size_t>(array_bytes / sizeof(double));
  const double bytes_per_pass = 3.0 * sizeof(double) * static_cast<double>(elements);
  out.one_core_bytes_per_s = bytes_per_pass / best_parallel_pass(elements, 1, out.repetitions);
  const std::size_t per_thread = elements / static_cast<std::size_t>(out.threads);
  const double all_bytes = 3.0 * sizeof(double) * static_cast<double>(per_thread) * out.threads;
  out.all_cores_bytes_per_s = all_bytes / best_parallel_pass(per_thread, out.threads, out.repetitions);
  return out;
}

}  // namespace ws
