#include "base/run_concurrently.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace slurmfleet {
namespace {

TEST(RunReleasedTest, RunsWhatIsReleasedInOrderAndStopsAtNever) {
  std::vector<int> asked(6, 0);
  std::mutex mu;
  std::vector<size_t> ran;
  RunReleased(
      6, 3,
      [&](size_t i) {
        ++asked[i];
        if (i == 2 && asked[i] < 3) return Release::kLater;
        return i < 4 ? Release::kNow : Release::kNever;
      },
      [&](size_t i) {
        std::lock_guard lock(mu);
        ran.push_back(i);
      });
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(asked[2], 3);  // asked again until released
  EXPECT_EQ(asked[4], 1);  // kNever: once, and nothing after it is asked
  EXPECT_EQ(asked[5], 0);
}

TEST(RunReleasedTest, NeverRunsMoreThanWidthAtOnce) {
  std::atomic<int> running{0}, widest{0};
  RunReleased(
      12, 3, [](size_t) { return Release::kNow; },
      [&](size_t) {
        const int now = ++running;
        int seen = widest.load();
        while (now > seen && !widest.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        --running;
      });
  EXPECT_LE(widest.load(), 3);
  EXPECT_GE(widest.load(), 2);
}

}  // namespace
}  // namespace slurmfleet
