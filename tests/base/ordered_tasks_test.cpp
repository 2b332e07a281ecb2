// for_each_ordered: results are consumed in index order whatever the threads, each worker's calls
// never overlap, and errors surface where a serial loop would meet them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/ordered_tasks.hpp"

namespace ws {
namespace {

// Later indices finish first, so out-of-order completion is the common case, not a rare one.
int slow_square(std::size_t i, std::size_t count) {
  std::this_thread::sleep_for(std::chrono::microseconds(50 * (count - i)));
  return static_cast<int>(i * i);
}

TEST(OrderedTasks, ConsumesInIndexOrderForAnyNumberOfThreads) {
  constexpr std::size_t kCount = 64;
  for (int jobs : {1, 2, 3, 8, 100}) {
    std::vector<std::size_t> order;
    std::vector<int> values;
    for_each_ordered<int>(
        kCount, jobs, [&](std::size_t i, int) { return slow_square(i, kCount); },
        [&](std::size_t i, int&& v) {
          order.push_back(i);
          values.push_back(v);
        });
    ASSERT_EQ(order.size(), kCount) << "jobs " << jobs;
    for (std::size_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(order[i], i);
      EXPECT_EQ(values[i], static_cast<int>(i * i));
    }
  }
}

TEST(OrderedTasks, AWorkersCallsNeverOverlapAndEveryWorkerIdIsInRange) {
  constexpr int kJobs = 4;
  std::vector<std::atomic<int>> busy(kJobs);
  std::atomic<bool> overlap{false}, out_of_range{false};
  for_each_ordered<int>(
      200, kJobs,
      [&](std::size_t i, int worker) {
        if (worker < 0 || worker >= kJobs) {
          out_of_range = true;
          return 0;
        }
        if (busy[static_cast<std::size_t>(worker)]++ != 0) overlap = true;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        busy[static_cast<std::size_t>(worker)]--;
        return static_cast<int>(i);
      },
      [](std::size_t, int&&) {});
  EXPECT_FALSE(overlap);
  EXPECT_FALSE(out_of_range);
}

TEST(OrderedTasks, TheFirstFailingIndexIsRethrownAfterEveryEarlierResult) {
  for (int jobs : {1, 4}) {
    std::vector<std::size_t> consumed;
    try {
      for_each_ordered<int>(
          40, jobs,
          [&](std::size_t i, int) {
            // Index 30 fails fast, index 10 slowly: a serial loop meets 10 first.
            if (i == 10) {
              std::this_thread::sleep_for(std::chrono::milliseconds(20));
              throw std::runtime_error("task 10");
            }
            if (i == 30) throw std::runtime_error("task 30");
            return static_cast<int>(i);
          },
          [&](std::size_t i, int&&) { consumed.push_back(i); });
      ADD_FAILURE() << "no exception, jobs " << jobs;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "task 10") << "jobs " << jobs;
    }
    ASSERT_EQ(consumed.size(), 10u) << "jobs " << jobs;
    for (std::size_t i = 0; i < consumed.size(); ++i) EXPECT_EQ(consumed[i], i);
  }
}

TEST(OrderedTasks, AnErrorWhileConsumingStopsTheWorkers) {
  constexpr std::size_t kCount = 10000;
  std::atomic<std::size_t> computed{0};
  EXPECT_THROW(for_each_ordered<int>(
                   kCount, 2,
                   [&](std::size_t i, int) {
                     ++computed;
                     std::this_thread::sleep_for(std::chrono::microseconds(100));
                     return static_cast<int>(i);
                   },
                   [](std::size_t i, int&&) {
                     if (i == 3) throw std::logic_error("stop");
                   }),
               std::logic_error);
  // The workers stop after the task they are on: far fewer than every task was computed.
  EXPECT_LT(computed.load(), kCount / 2);
}

TEST(OrderedTasks, NoTasksCallNothing) {
  bool called = false;
  for_each_ordered<int>(
      0, 4, [&](std::size_t, int) { return called = true, 0; }, [&](std::size_t, int&&) { called = true; });
  EXPECT_FALSE(called);
  EXPECT_GE(usable_cores(), 1);
}

}  // namespace
}  // namespace ws
