#include "slurm/job_outcome.h"

#include <gtest/gtest.h>

namespace slurmfleet::slurm {
namespace {

JobInfo Ended(std::vector<std::string> state) {
  JobInfo j;
  j.state = ParseJobState(state);
  j.current_working_directory = "/nonexistent/dir";
  return j;
}

TEST(JobOutcomeTest, MissingWorkingDirectorySaysSo) {
  JobInfo j = Ended({"FAILED"});
  j.state_reason = "RaisedSignal";
  j.state_description = "RaisedSignal:53(Real-time signal 19)";
  j.exit_code.signal = 53;
  std::string s = DescribeOutcome(j);
  EXPECT_NE(s.find("working directory '/nonexistent/dir'"), std::string::npos) << s;
  EXPECT_NE(s.find("RaisedSignal:53"), std::string::npos) << s;
}

TEST(JobOutcomeTest, ExitCodesAndSignals) {
  JobInfo ok = Ended({"COMPLETED"});
  ok.exit_code.return_code = 0;
  EXPECT_EQ(DescribeOutcome(ok), "COMPLETED, exit code 0");
  JobInfo failed = Ended({"FAILED"});
  failed.exit_code.return_code = 3;
  failed.state_reason = "NonZeroExitCode";
  EXPECT_EQ(DescribeOutcome(failed), "FAILED, exit code 3 (Slurm: NonZeroExitCode)");
  JobInfo killed = Ended({"CANCELLED"});
  killed.exit_code.signal = 9;
  killed.exit_code.signal_name = "KILL";
  EXPECT_EQ(DescribeOutcome(killed), "CANCELLED, killed by signal 9 (KILL)");
}

TEST(JobOutcomeTest, TimeoutNamesTheLimit) {
  JobInfo j = Ended({"TIMEOUT"});
  j.time_limit_minutes = 10;
  EXPECT_EQ(DescribeOutcome(j), "TIMEOUT after its time limit of 10 min");
}

TEST(JobOutcomeTest, PendingNamesTheReason) {
  JobInfo j = Ended({"PENDING"});
  j.state_reason = "BadConstraints";
  EXPECT_EQ(DescribeOutcome(j), "PENDING (reason: BadConstraints)");
}

TEST(JobOutcomeTest, OutOfMemorySaysWhatToRaise) {
  EXPECT_NE(DescribeOutcome(Ended({"OUT_OF_MEMORY"})).find("memory_per_node"), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet::slurm
