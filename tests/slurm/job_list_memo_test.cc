// JobListMemo: digests, which list's entries it holds, and where their jobs are.
#include "slurm/job_list_memo.h"

#include <gtest/gtest.h>

namespace slurmfleet::slurm {
namespace {

JobListMemo::Entry Left(uint32_t id) { return {id, false, JobListMemo::kNotKept}; }

TEST(JobListMemoTest, ADigestFollowsTheTextAndTheMemosSeed) {
  JobListMemo a, b;
  EXPECT_EQ(a.Digest("{\"job_id\": 1}"), a.Digest("{\"job_id\": 1}"));
  EXPECT_NE(a.Digest("{\"job_id\": 1}"), a.Digest("{\"job_id\": 2}"));
  EXPECT_NE(a.Digest("{\"job_id\": 1}"), a.Digest("{\"job_id\": 1} "));
  // drawn per memo: another process cannot compute this one's digests
  EXPECT_NE(a.Digest("{\"job_id\": 1}"), b.Digest("{\"job_id\": 1}"));
}

TEST(JobListMemoTest, HoldsTheLastCommittedListsJobsOnly) {
  JobListMemo memo;
  const JobFilter filter{"slurmfleet:a:", {}};
  memo.Begin(filter);
  EXPECT_EQ(memo.Recall(1), nullptr) << "nothing before the first list";
  memo.Note(1, Left(11));
  memo.Note(2, {12, true, 0});
  EXPECT_EQ(memo.Recall(1), nullptr) << "a list's own entries are not recalled within it";
  memo.Commit();
  EXPECT_EQ(memo.size(), 2u);

  memo.Begin(filter);
  JobListMemo::Entry* known = memo.Recall(2);
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(known->job_id, 12u);
  EXPECT_TRUE(known->always_wanted);
  EXPECT_EQ(known->place, 0u);
  EXPECT_EQ(memo.Recall(2), nullptr) << "moved into this list";
  memo.Note(3, Left(13));
  memo.Commit();
  EXPECT_EQ(memo.size(), 2u) << "job 11 left the list, and the memo";

  memo.Begin(filter);
  EXPECT_EQ(memo.Recall(1), nullptr);
  EXPECT_NE(memo.Recall(3), nullptr);
}

TEST(JobListMemoTest, RecallsJobsListedInAnotherOrderOrWithOthersBetween) {
  // Entries are looked for first in the last list's order, then by digest. These digests share
  // their low bits, so every one is stored away from the cell its digest names.
  JobListMemo memo;
  const JobFilter filter{"slurmfleet:a:", {}};
  constexpr uint32_t kJobs = 600;
  memo.Begin(filter);
  for (uint32_t i = 0; i < kJobs; ++i) memo.Note(uint64_t{i} << 20, Left(i));
  memo.Commit();

  memo.Begin(filter);
  for (uint32_t i = kJobs; i-- > 0;) {
    if (i % 3 == 0) continue;                             // left the list
    memo.Note((uint64_t{i} << 20) + 1, Left(kJobs + i));  // a new job before it
    JobListMemo::Entry* known = memo.Recall(uint64_t{i} << 20);
    ASSERT_NE(known, nullptr) << i;
    EXPECT_EQ(known->job_id, i);
  }
  memo.Commit();
  EXPECT_EQ(memo.size(), 2 * (kJobs - kJobs / 3));

  memo.Begin(filter);
  for (uint32_t i = 0; i < kJobs; ++i) {
    JobListMemo::Entry* known = memo.Recall(uint64_t{i} << 20);
    EXPECT_EQ(known == nullptr, i % 3 == 0) << i;
    JobListMemo::Entry* added = memo.Recall((uint64_t{i} << 20) + 1);
    ASSERT_EQ(added == nullptr, i % 3 == 0) << i;
    if (added) {
      EXPECT_EQ(added->job_id, kJobs + i);
    }
  }
}

TEST(JobListMemoTest, AJobMovedInTheArrayIsRecalledAtItsNewPlace) {
  JobListMemo memo;
  const JobFilter filter{"slurmfleet:a:", {}};
  memo.Begin(filter);
  memo.Note(1, {11, true, 0});
  memo.Note(2, {12, true, 1});
  memo.Commit();

  memo.Begin(filter);
  ASSERT_NE(memo.Recall(1), nullptr);
  EXPECT_FALSE(memo.Moved(1, 7)) << "recalled: this list has placed it already";
  EXPECT_FALSE(memo.Moved(3, 7)) << "not in the last list";
  EXPECT_TRUE(memo.Moved(2, 5));
  JobListMemo::Entry* known = memo.Recall(2);
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(known->place, 5u);
}

TEST(JobListMemoTest, AnAbandonedListKeepsWhatTheMemoKnewAndLearnt) {
  JobListMemo memo;
  const JobFilter filter{"slurmfleet:a:", {}};
  memo.Begin(filter);
  memo.Note(1, Left(11));
  memo.Note(2, Left(12));
  memo.Commit();
  memo.Begin(filter);
  ASSERT_NE(memo.Recall(1), nullptr);
  memo.Note(3, Left(13));
  memo.Abandon();  // job 2 was not reached
  EXPECT_EQ(memo.size(), 3u);
  memo.Begin(filter);
  for (uint64_t digest : {1, 2, 3}) EXPECT_NE(memo.Recall(digest), nullptr) << digest;
}

TEST(JobListMemoTest, AnotherTagPrefixForgetsEverything) {
  // whether a job carries the tag was decided with the old prefix
  JobListMemo memo;
  memo.Begin(JobFilter{"slurmfleet:a:", {}});
  memo.Note(1, Left(11));
  memo.Commit();
  memo.Begin(JobFilter{"slurmfleet:a:", {5}});  // other ids: entries stay
  EXPECT_NE(memo.Recall(1), nullptr);
  memo.Commit();
  memo.Begin(JobFilter{"slurmfleet:b:", {}});
  EXPECT_EQ(memo.Recall(1), nullptr);
  EXPECT_EQ(memo.size(), 0u);
}

}  // namespace
}  // namespace slurmfleet::slurm
