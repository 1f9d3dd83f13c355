#include "store/history_pruner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/fake_clock.h"

namespace slurmfleet::store {
namespace {

using namespace std::chrono_literals;

class HistoryPrunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(":memory:", clock_);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
    Submission s;
    s.key = "ended";
    s.kind = "job";
    s.cloud = "c1";
    s.owner = "o";
    ASSERT_TRUE(store_->Add(s));
    s.phase = Phase::kFailed;
    ASSERT_TRUE(store_->Update(s));
  }

  HistoryPrunerOptions Options(std::chrono::milliseconds first_delay) {
    HistoryPrunerOptions o;
    o.keep = std::chrono::hours(24 * 7);
    o.first_delay = first_delay;
    o.interval = 1ms;
    o.log = [this](std::string_view line) {
      std::lock_guard lock(mu_);
      logged_.emplace_back(line);
    };
    return o;
  }
  std::vector<std::string> Logged() {
    std::lock_guard lock(mu_);
    return logged_;
  }

  FakeClock clock_{std::chrono::sys_seconds(1'700'000'000s)};
  std::unique_ptr<Store> store_;
  std::mutex mu_;
  std::vector<std::string> logged_;  // guarded by mu_
};

TEST_F(HistoryPrunerTest, RemovesWhatIsIdleForLongerThanItKeepsAndSaysWhat) {
  HistoryPruner pruner(*store_, clock_, Options(1h));
  clock_.Advance(std::chrono::hours(24 * 7));  // idle exactly as long as kept: stays
  ASSERT_TRUE(pruner.RunOnce());
  EXPECT_TRUE(store_->Get("ended"));
  EXPECT_TRUE(Logged().empty());  // nothing removed, nothing said
  clock_.Advance(1s);
  Result<PruneCounts> pruned = pruner.RunOnce();
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  EXPECT_EQ(pruned->submissions, 1);
  EXPECT_EQ(store_->Get("ended").error().code, Code::kNotFound);
  EXPECT_EQ(Logged(), std::vector<std::string>{"removed the history idle for over 7 days (keys 1, "
                                               "submissions 1, records 0, events 1)"});
  EXPECT_EQ(pruner.runs(), 0u);  // the thread still waits for its first delay
}

TEST_F(HistoryPrunerTest, ItsThreadRunsAfterTheFirstDelayAndThenEveryInterval) {
  clock_.Advance(std::chrono::hours(24 * 8));
  HistoryPruner pruner(*store_, clock_, Options(1ms));
  for (int i = 0; i < 30000 && pruner.runs() < 3; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_GE(pruner.runs(), 3u);
  EXPECT_EQ(store_->Get("ended").error().code, Code::kNotFound);
  EXPECT_EQ(Logged().size(), 1u);  // the later runs found nothing
}

TEST_F(HistoryPrunerTest, StoppedWhileWaitingForItsFirstRunItNeverRuns) {
  // Destroyed while its thread waits out an hour's delay: the wait ends at once (the test would
  // otherwise hang past its time-out), and nothing is removed.
  clock_.Advance(std::chrono::hours(24 * 8));
  { HistoryPruner pruner(*store_, clock_, Options(1h)); }
  EXPECT_TRUE(store_->Get("ended"));
  EXPECT_TRUE(Logged().empty());
}

}  // namespace
}  // namespace slurmfleet::store
