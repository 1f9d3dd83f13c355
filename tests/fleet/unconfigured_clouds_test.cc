#include "fleet/unconfigured_clouds.h"

#include <gtest/gtest.h>

namespace slurmfleet::fleet {
namespace {

store::Submission Sub(const std::string& cloud, store::Phase phase,
                      std::optional<uint32_t> job_id = std::nullopt) {
  store::Submission s;
  s.key = cloud + "-" + std::to_string(job_id.value_or(0));
  s.cloud = cloud;
  s.phase = phase;
  s.job_id = job_id;
  return s;
}

TEST(UnconfiguredCloudsTest, OnlyLiveWorkOfCloudsNotConfiguredIsNamed) {
  const std::vector<store::Submission> live = {
      Sub("old", store::Phase::kRunning, 12), Sub("tb", store::Phase::kRunning, 13),
      Sub("old", store::Phase::kPending, 14), Sub("old", store::Phase::kSucceeded, 15),
      Sub("gone", store::Phase::kIntent),     Sub("batch", store::Phase::kPending, 16),
      Sub("old", store::Phase::kSubmitting)};
  const std::vector<UnconfiguredCloud> found = UnconfiguredClouds(live, {"tb", "batch"});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], (UnconfiguredCloud{"gone", {}, 1}));
  EXPECT_EQ(found[1], (UnconfiguredCloud{"old", {12, 14}, 1}));
  EXPECT_TRUE(UnconfiguredClouds(live, {"tb", "batch", "old", "gone"}).empty());
}

TEST(UnconfiguredCloudsTest, TheLineNamesTheJobsAndBothWaysOut) {
  EXPECT_EQ(DescribeUnconfiguredCloud({"old", {12, 14}, 1}),
            "cloud old is not in the configuration, but the state holds 2 Slurm job(s) (12 14) "
            "and 1 submission(s) without a job id yet of it: nothing tracks or cancels them now. "
            "Put the cloud back until they have ended, or cancel them on that cluster "
            "(scancel 12 14)");
  EXPECT_EQ(DescribeUnconfiguredCloud({"gone", {}, 2}),
            "cloud gone is not in the configuration, but the state holds 2 submission(s) without "
            "a job id yet of it: nothing tracks or cancels them now. Put the cloud back until "
            "they have ended, or cancel them on that cluster");
}

TEST(UnconfiguredCloudsTest, ManyJobsAreCountedNotAllListed) {
  UnconfiguredCloud many{"old", {}, 0};
  for (uint32_t id = 1; id <= 25; ++id) many.job_ids.push_back(id);
  const std::string line = DescribeUnconfiguredCloud(many);
  EXPECT_NE(line.find("25 Slurm job(s) (1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 and 5 "
                      "more)"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("scancel"), std::string::npos) << line;
}

}  // namespace
}  // namespace slurmfleet::fleet
