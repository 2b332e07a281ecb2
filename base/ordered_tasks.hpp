// Independent tasks computed on a few threads and consumed in their index order on the calling
// thread. What the caller does with the results (records, progress lines, the first error) is then
// exactly what a serial loop does, whatever the number of threads: a parallel run's output can be
// byte-identical to the serial run's. Workers take the next index as they finish, so uneven tasks
// keep every thread busy; finished results wait in memory until their turn.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ws {

// The cores this process may run on (its CPU affinity: taskset, a batch system's cgroup), at least 1.
inline int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Calls compute(i, worker) for every i in [0, count) on `jobs` threads (worker in [0, jobs): a
// worker's calls never overlap, so per-worker state such as a cache needs no lock), and consume(i,
// result) on the calling thread for i = 0, 1, ... in order. An exception from compute(i) is
// rethrown when i's turn comes (results before it are consumed first, as in a serial loop); one
// from consume stops the workers after their current task and is rethrown. jobs <= 1 computes
// inline on the calling thread as worker 0.
template <class Result>
void for_each_ordered(std::size_t count, int jobs, const std::function<Result(std::size_t index, int worker)>& compute,
                      const std::function<void(std::size_t index, Result&& result)>& consume) {
  const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(jobs, 1)), count));
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) consume(i, compute(i, 0));
    return;
  }
  struct Slot {
    std::optional<Result> result;
    std::exception_ptr error;
    bool ready = false;
  };
  std::vector<Slot> slots(count);
  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};

  auto work = [&](int worker) {
    for (std::size_t i = next++; i < count && !stop; i = next++) {
      std::optional<Result> result;
      std::exception_ptr error;
      try {
        result.emplace(compute(i, worker));
      } catch (...) {
        error = std::current_exception();
      }
      {
        const std::lock_guard<std::mutex> lock(mutex);
        slots[i].result = std::move(result);
        slots[i].error = error;
        slots[i].ready = true;
      }
      finished.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int w = 0; w < threads; ++w) pool.emplace_back(work, w);
  auto join = [&] {
    stop = true;
    for (auto& t : pool) t.join();
  };

  try {
    for (std::size_t i = 0; i < count; ++i) {
      std::optional<Result> result;
      {
        std::unique_lock<std::mutex> lock(mutex);
        finished.wait(lock, [&] { return slots[i].ready; });
        if (slots[i].error) std::rethrow_exception(slots[i].error);
        result.swap(slots[i].result);
      }
      consume(i, std::move(*result));
    }
  } catch (...) {
    join();
    throw;
  }
  join();
}

}  // namespace ws
