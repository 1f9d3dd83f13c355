#include "fleet/active_submissions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace slurmfleet::fleet {
namespace {

store::Submission Sub(const std::string& key, store::Phase phase = store::Phase::kPending) {
  store::Submission s;
  s.key = key;
  s.phase = phase;
  return s;
}

std::vector<std::string> Keys(const ActiveSubmissions& active) {
  std::vector<std::string> keys;
  for (const store::Submission& s : active) keys.push_back(s.key);
  return keys;
}

TEST(ActiveSubmissionsTest, WalksInKeyOrderWhateverTheOrderOfAdding) {
  ActiveSubmissions active;
  EXPECT_TRUE(Keys(active).empty());
  for (const char* key : {"sf-c", "sf-a", "sf-d", "sf-b"}) active.Put(Sub(key));
  EXPECT_EQ(Keys(active), (std::vector<std::string>{"sf-a", "sf-b", "sf-c", "sf-d"}));
  active.Put(Sub("sf-0"));  // added after a walk: the next walk has it
  EXPECT_EQ(Keys(active), (std::vector<std::string>{"sf-0", "sf-a", "sf-b", "sf-c", "sf-d"}));
  EXPECT_EQ(active.size(), 5u);
}

TEST(ActiveSubmissionsTest, ReplacingKeepsThePlaceAndTheWalkSeesTheNewCopy) {
  ActiveSubmissions active;
  active.Put(Sub("sf-a"));
  active.Put(Sub("sf-b"));
  ASSERT_EQ(Keys(active).size(), 2u);
  active.Put(Sub("sf-a", store::Phase::kRunning));
  EXPECT_EQ(active.size(), 2u);
  auto it = active.begin();
  EXPECT_EQ(it->key, "sf-a");
  EXPECT_EQ(it->phase, store::Phase::kRunning);
  EXPECT_EQ((++it)->key, "sf-b");
  EXPECT_EQ(++it, active.end());
}

TEST(ActiveSubmissionsTest, FindsByKeyAndChangesMadeThroughAWalkAreKept) {
  ActiveSubmissions active;
  active.Put(Sub("sf-a"));
  EXPECT_EQ(active.Find("sf-z"), nullptr);
  for (store::Submission& s : active) s.job_id = 42;
  ASSERT_NE(active.Find("sf-a"), nullptr);
  EXPECT_EQ(active.Find("sf-a")->job_id, 42u);
}

TEST(ActiveSubmissionsTest, ErasesByKeyAndByPredicateCalledOnceEachInKeyOrder) {
  ActiveSubmissions active;
  for (const char* key : {"sf-d", "sf-b", "sf-a", "sf-c"}) active.Put(Sub(key));
  ASSERT_EQ(Keys(active).size(), 4u);
  active.Erase("sf-b");
  active.Erase("sf-missing");
  EXPECT_EQ(Keys(active), (std::vector<std::string>{"sf-a", "sf-c", "sf-d"}));

  active.Find("sf-c")->phase = store::Phase::kSucceeded;
  std::vector<std::string> asked;
  active.EraseIf([&](const store::Submission& s) {
    asked.push_back(s.key);
    return store::IsTerminal(s.phase);
  });
  EXPECT_EQ(asked, (std::vector<std::string>{"sf-a", "sf-c", "sf-d"}));
  EXPECT_EQ(Keys(active), (std::vector<std::string>{"sf-a", "sf-d"}));
  EXPECT_EQ(active.Find("sf-c"), nullptr);
  EXPECT_EQ(active.size(), 2u);
}

}  // namespace
}  // namespace slurmfleet::fleet
