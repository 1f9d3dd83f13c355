#include "base/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace slurmfleet {
namespace {

TEST(WorkerPoolTest, RunsEveryIndexOnce) {
  WorkerPool pool;
  for (size_t n : {0, 1, 2, 7, 50}) {
    std::vector<std::atomic<int>> ran(n);
    pool.Run(n, 4, [&](size_t i) { ++ran[i]; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(ran[i].load(), 1) << "n " << n << " index " << i;
  }
}

TEST(WorkerPoolTest, WidthOneRunsEverythingOnTheCallingThreadInOrder) {
  WorkerPool pool;
  std::vector<size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  pool.Run(5, 1, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(pool.threads(), 0u);
}

// All `width` calls are held until every one of them has started: this returns only if the pool
// really runs `width` at once, and it counts that no more than that ever run together.
TEST(WorkerPoolTest, RunsWidthCallsAtOnceAndNeverMore) {
  WorkerPool pool;
  constexpr size_t kWidth = 4;
  std::mutex mu;
  std::condition_variable cv;
  size_t running = 0, widest = 0, started = 0;
  pool.Run(12, kWidth, [&](size_t) {
    std::unique_lock lock(mu);
    ++running;
    widest = std::max(widest, running);
    if (++started <= kWidth) {
      cv.notify_all();
      // bounded, so a pool that runs fewer at once fails here instead of hanging
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return started >= kWidth; });
    }
    --running;
  });
  EXPECT_EQ(widest, kWidth);
  EXPECT_EQ(started, 12u);
}

TEST(WorkerPoolTest, KeepsItsThreadsFromOneRunToTheNext) {
  WorkerPool pool;
  std::mutex mu;
  std::set<std::thread::id> seen;
  for (int run = 0; run < 20; ++run) {
    pool.Run(8, 3, [&](size_t) {
      std::lock_guard lock(mu);
      seen.insert(std::this_thread::get_id());
    });
  }
  EXPECT_EQ(pool.threads(), 2u);
  EXPECT_LE(seen.size(), 3u);  // the caller and the two kept threads, never fresh ones
  pool.Run(8, 5, [](size_t) {});
  EXPECT_EQ(pool.threads(), 4u);  // a wider run adds what it lacks
}

// A call of one caller's run never overlaps a call of the other's.
TEST(WorkerPoolTest, RunsFromSeveralThreadsTakeTurns) {
  WorkerPool pool;
  std::atomic<int> in_flight[2] = {0, 0};
  std::atomic<int> overlapped{0}, total{0};
  auto caller = [&](int me) {
    for (int run = 0; run < 50; ++run) {
      pool.Run(6, 3, [&](size_t) {
        ++in_flight[me];
        for (int k = 0; k < 20; ++k) {
          if (in_flight[1 - me] > 0) ++overlapped;
          std::this_thread::yield();
        }
        --in_flight[me];
        ++total;
      });
    }
  };
  std::thread a(caller, 0), b(caller, 1);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 50 * 6);
  EXPECT_EQ(overlapped.load(), 0);
}

}  // namespace
}  // namespace slurmfleet
