#include "base/kept_thread.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace slurmfleet {
namespace {

using namespace std::chrono_literals;

TEST(KeptThreadTest, StartReturnsWhileTheTaskRunsAndWaitReturnsOnceItEnded) {
  KeptThread helper;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> ended{false};
  helper.Start([&] {
    // bounded, so a Start that waited for its task fails here instead of hanging
    released.wait_for(10s);
    ended = true;
  });
  EXPECT_FALSE(ended.load()) << "Start waited for the task";
  release.set_value();
  helper.Wait();
  EXPECT_TRUE(ended.load());
}

TEST(KeptThreadTest, EveryTaskRunsOnTheSameThreadOtherThanTheCallers) {
  KeptThread helper;
  std::vector<std::thread::id> ran_on;
  for (int i = 0; i < 3; ++i) {
    helper.Start([&] { ran_on.push_back(std::this_thread::get_id()); });
    helper.Wait();
  }
  ASSERT_EQ(ran_on.size(), 3u);
  EXPECT_NE(ran_on[0], std::this_thread::get_id());
  EXPECT_EQ(ran_on[1], ran_on[0]);
  EXPECT_EQ(ran_on[2], ran_on[0]);
}

TEST(KeptThreadTest, StartWaitsForTheTaskBeforeAndTasksNeverOverlap) {
  KeptThread helper;
  std::atomic<int> running{0};
  std::atomic<int> widest{0};
  std::atomic<int> done{0};
  for (int i = 0; i < 5; ++i) {
    helper.Start([&] {
      widest = std::max(widest.load(), ++running);
      std::this_thread::sleep_for(2ms);
      --running;
      ++done;
    });
  }
  helper.Wait();
  EXPECT_EQ(done.load(), 5);
  EXPECT_EQ(widest.load(), 1);
}

TEST(KeptThreadTest, WhatATaskHoldsIsReleasedBeforeWaitReturns) {
  KeptThread helper;
  auto held = std::make_shared<int>(7);
  std::weak_ptr<int> watch = held;
  helper.Start([held = std::move(held)] { EXPECT_EQ(*held, 7); });
  helper.Wait();
  EXPECT_TRUE(watch.expired());
}

TEST(KeptThreadTest, WaitWithoutATaskReturnsAndDestructionWaitsForTheLastTask) {
  std::atomic<bool> ended{false};
  {
    KeptThread helper;
    helper.Wait();
    helper.Start([&] {
      std::this_thread::sleep_for(20ms);
      ended = true;
    });
  }
  EXPECT_TRUE(ended.load());
  KeptThread never_used;  // destroyed without a thread to join
}

}  // namespace
}  // namespace slurmfleet
