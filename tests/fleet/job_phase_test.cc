#include "fleet/job_phase.h"

#include <gtest/gtest.h>

namespace slurmfleet::fleet {
namespace {

using store::Phase;

slurm::JobInfo Job(std::vector<std::string> state, std::string reason = "None") {
  slurm::JobInfo j;
  j.state = slurm::ParseJobState(state);
  j.state_reason = std::move(reason);
  return j;
}

TEST(JobPhaseTest, EveryBaseState) {
  const std::vector<std::pair<std::string, Phase>> cases = {
      {"PENDING", Phase::kPending},     {"RUNNING", Phase::kRunning},
      {"SUSPENDED", Phase::kSuspended}, {"COMPLETED", Phase::kSucceeded},
      {"CANCELLED", Phase::kCancelled}, {"FAILED", Phase::kFailed},
      {"TIMEOUT", Phase::kFailed},      {"NODE_FAIL", Phase::kFailed},
      {"PREEMPTED", Phase::kFailed},    {"BOOT_FAIL", Phase::kFailed},
      {"DEADLINE", Phase::kFailed},     {"OUT_OF_MEMORY", Phase::kFailed},
  };
  for (const auto& [state, phase] : cases) {
    EXPECT_EQ(DecidePhase(Job({state}), Phase::kPending, {}).phase, phase) << state;
  }
}

TEST(JobPhaseTest, CompletingIsNotTerminalWhateverTheBaseState) {
  for (std::string base : {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT"}) {
    EXPECT_EQ(DecidePhase(Job({base, "COMPLETING"}), Phase::kRunning, {}).phase, Phase::kCompleting)
        << base;
  }
  EXPECT_EQ(DecidePhase(Job({"COMPLETED", "STAGE_OUT"}), Phase::kRunning, {}).phase,
            Phase::kCompleting);
  EXPECT_FALSE(store::IsTerminal(Phase::kCompleting));
}

TEST(JobPhaseTest, ConfiguringNodesAreStarting) {
  EXPECT_EQ(DecidePhase(Job({"RUNNING", "CONFIGURING"}), Phase::kPending, {}).phase,
            Phase::kStarting);
  EXPECT_EQ(DecidePhase(Job({"PENDING", "POWER_UP_NODE"}), Phase::kPending, {}).phase,
            Phase::kStarting);
}

TEST(JobPhaseTest, RequeuedJobsFailBecauseRetriesAreOurs) {
  PhaseDecision d =
      DecidePhase(Job({"PENDING", "REQUEUE_HOLD"}, "JobHeldAdmin"), Phase::kRunning, {});
  EXPECT_EQ(d.phase, Phase::kFailed);
  EXPECT_NE(d.failure.find("requeue"), std::string::npos);
}

TEST(JobPhaseTest, UnresolvableReasonsFailFastWithTheReason) {
  FailFastPolicy policy;
  for (std::string reason : {"PartitionConfig", "BadConstraints", "InvalidAccount", "InvalidQOS"}) {
    PhaseDecision d = DecidePhase(Job({"PENDING"}, reason), Phase::kPending, policy);
    EXPECT_EQ(d.phase, Phase::kFailed) << reason;
    EXPECT_NE(d.failure.find(reason), std::string::npos) << reason;
  }
  for (std::string reason : {"Resources", "Priority", "None", "BeginTime", "JobHeldUser"}) {
    EXPECT_EQ(DecidePhase(Job({"PENDING"}, reason), Phase::kPending, policy).phase, Phase::kPending)
        << reason;
  }
}

TEST(JobPhaseTest, PartitionDownIsFatalOnlyWhenConfigured) {
  FailFastPolicy policy;
  EXPECT_EQ(DecidePhase(Job({"PENDING"}, "PartitionDown"), Phase::kPending, policy).phase,
            Phase::kPending);
  policy.partition_down_is_fatal = true;
  EXPECT_EQ(DecidePhase(Job({"PENDING"}, "PartitionDown"), Phase::kPending, policy).phase,
            Phase::kFailed);
}

TEST(JobPhaseTest, UnknownStateKeepsTheCurrentPhase) {
  EXPECT_EQ(DecidePhase(Job({"WARPING"}), Phase::kRunning, {}).phase, Phase::kRunning);
  EXPECT_EQ(PhaseOfState(slurm::ParseJobState({"WARPING"}), Phase::kPending), Phase::kPending);
}

TEST(JobPhaseTest, FailureTextExplainsTheEnd) {
  slurm::JobInfo j = Job({"FAILED"}, "NonZeroExitCode");
  j.exit_code.return_code = 2;
  PhaseDecision d = DecidePhase(j, Phase::kRunning, {});
  EXPECT_EQ(d.phase, Phase::kFailed);
  EXPECT_NE(d.failure.find("exit code 2"), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet::fleet
