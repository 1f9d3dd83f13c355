#include "slurm/job.h"

#include <gtest/gtest.h>

namespace slurmfleet::slurm {
namespace {

TEST(JobStateTest, EveryBaseStateParsesAndPrints) {
  const std::vector<std::pair<std::string, BaseState>> cases = {
      {"PENDING", BaseState::kPending},     {"RUNNING", BaseState::kRunning},
      {"SUSPENDED", BaseState::kSuspended}, {"COMPLETED", BaseState::kCompleted},
      {"CANCELLED", BaseState::kCancelled}, {"FAILED", BaseState::kFailed},
      {"TIMEOUT", BaseState::kTimeout},     {"NODE_FAIL", BaseState::kNodeFail},
      {"PREEMPTED", BaseState::kPreempted}, {"BOOT_FAIL", BaseState::kBootFail},
      {"DEADLINE", BaseState::kDeadline},   {"OUT_OF_MEMORY", BaseState::kOutOfMemory},
  };
  for (const auto& [name, base] : cases) {
    JobState s = ParseJobState({name});
    EXPECT_EQ(s.base, base) << name;
    EXPECT_EQ(s.flags, 0u) << name;
    EXPECT_EQ(BaseStateName(base), name);
    EXPECT_EQ(JobStateString(s), name);
  }
}

TEST(JobStateTest, EveryFlagParsesAlongsideTheBaseState) {
  const std::vector<std::pair<std::string, JobFlag>> flags = {
      {"LAUNCH_FAILED", kFlagLaunchFailed},
      {"REQUEUED", kFlagRequeued},
      {"REQUEUE_HOLD", kFlagRequeueHold},
      {"SPECIAL_EXIT", kFlagSpecialExit},
      {"RESIZING", kFlagResizing},
      {"CONFIGURING", kFlagConfiguring},
      {"COMPLETING", kFlagCompleting},
      {"STOPPED", kFlagStopped},
      {"RECONFIG_FAIL", kFlagReconfigFail},
      {"POWER_UP_NODE", kFlagPowerUpNode},
      {"REVOKED", kFlagRevoked},
      {"REQUEUE_FED", kFlagRequeueFed},
      {"RESV_DEL_HOLD", kFlagResvDelHold},
      {"SIGNALING", kFlagSignaling},
      {"STAGE_OUT", kFlagStageOut},
      {"EXPEDITING", kFlagExpediting},
  };
  for (const auto& [name, flag] : flags) {
    JobState s = ParseJobState({"RUNNING", name});
    EXPECT_EQ(s.base, BaseState::kRunning) << name;
    EXPECT_TRUE(s.Has(flag)) << name;
    EXPECT_EQ(s.flags, static_cast<uint32_t>(flag)) << name;
    EXPECT_EQ(JobStateString(s), "RUNNING+" + name);
  }
}

TEST(JobStateTest, CancelledWhileCompletingKeepsBoth) {
  JobState s = ParseJobState({"CANCELLED", "COMPLETING"});
  EXPECT_EQ(s.base, BaseState::kCancelled);
  EXPECT_TRUE(s.Has(kFlagCompleting));
  EXPECT_EQ(JobStateString(s), "CANCELLED+COMPLETING");
}

TEST(JobStateTest, UnknownNamesArePreservedNotDropped) {
  JobState s = ParseJobState({"WARPING"});
  EXPECT_EQ(s.base, BaseState::kUnknown);
  EXPECT_EQ(s.raw, std::vector<std::string>{"WARPING"});
  EXPECT_EQ(JobStateString(s), "WARPING");
  EXPECT_EQ(JobStateString(ParseJobState({})), "UNKNOWN");
}

TEST(JobRefTest, UsesTheSluidOnlyWhereTheApiHasOne) {
  JobRef both{42, "sA6HM8NAVYCT00"};
  EXPECT_EQ(both.PathSegment(true), "sA6HM8NAVYCT00");
  EXPECT_EQ(both.PathSegment(false), "42");
  JobRef id_only{42, ""};
  EXPECT_EQ(id_only.PathSegment(true), "42");
  EXPECT_EQ(both.ToString(), "sA6HM8NAVYCT00");
  EXPECT_EQ(id_only.ToString(), "42");
}

TEST(WholeNumberTest, OnlyIntegersWithinTheRange) {
  const WholeNumberRange range{2, 10, "MB"};
  EXPECT_EQ(WholeNumberIn(nlohmann::json(2), range), 2u);
  EXPECT_EQ(WholeNumberIn(nlohmann::json(10u), range), 10u);
  for (const char* text :
       {"1", "11", "-3", "4.0", "\"5\"", "true", "null", "18446744073709551615"}) {
    EXPECT_FALSE(WholeNumberIn(nlohmann::json::parse(text), range)) << text;
  }
  EXPECT_EQ(ExpectedWholeNumber(range), "expected a whole number of MB from 2 to 10");
  EXPECT_EQ(ExpectedWholeNumber(kCountRange), "expected a whole number from 1 to 2147483647");
}

}  // namespace
}  // namespace slurmfleet::slurm
