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

JobInfo RanOn(std::vector<std::string> state) {
  JobInfo j = Ended(std::move(state));
  j.current_working_directory = "/w";
  j.standard_output = "/w/slurm-7.out";
  j.batch_host = "n1";
  return j;
}

TEST(JobOutcomeTest, AScriptThatFailedSaysWhereItsOutputWent) {
  JobInfo j = RanOn({"FAILED"});
  j.exit_code.return_code = 255;
  j.state_reason = "NonZeroExitCode";
  EXPECT_EQ(DescribeOutcome(j),
            "FAILED, exit code 255 (Slurm: NonZeroExitCode); the script's output is in "
            "/w/slurm-7.out on node n1");
  j.standard_error = "/w/slurm-7.err";
  EXPECT_EQ(DescribeOutcome(j),
            "FAILED, exit code 255 (Slurm: NonZeroExitCode); the script's output is in "
            "/w/slurm-7.out, its errors in /w/slurm-7.err on node n1");
  j.standard_output = "/dev/null";
  EXPECT_EQ(DescribeOutcome(j),
            "FAILED, exit code 255 (Slurm: NonZeroExitCode); the script's errors are in "
            "/w/slurm-7.err on node n1");
  j.standard_error = "/dev/null";
  EXPECT_EQ(DescribeOutcome(j), "FAILED, exit code 255 (Slurm: NonZeroExitCode)");
}

TEST(JobOutcomeTest, TimeoutAndOutOfMemorySayWhereTheOutputWent) {
  JobInfo timeout = RanOn({"TIMEOUT"});
  timeout.time_limit_minutes = 10;
  EXPECT_EQ(DescribeOutcome(timeout),
            "TIMEOUT after its time limit of 10 min; the script's output is in /w/slurm-7.out on "
            "node n1");
  const std::string oom = DescribeOutcome(RanOn({"OUT_OF_MEMORY"}));
  EXPECT_TRUE(oom.ends_with("; the script's output is in /w/slurm-7.out on node n1")) << oom;
}

TEST(JobOutcomeTest, OutputLocationNamesTheFilesAndTheNode) {
  JobInfo j = RanOn({"COMPLETED"});
  EXPECT_EQ(OutputLocation(j), "the script's output is in /w/slurm-7.out on node n1");
  j.batch_host.clear();  // never started
  EXPECT_EQ(OutputLocation(j), "the script's output is in /w/slurm-7.out");
  j.standard_output.clear();
  EXPECT_EQ(OutputLocation(j), "");
}

TEST(JobOutcomeTest, NoOutputIsNamedWhereTheScriptNeverRanOrDidNotFail) {
  // slurmstepd could not enter the working directory: no output file was written
  JobInfo setup = RanOn({"FAILED"});
  setup.exit_code.signal = kSetupFailureSignal;
  EXPECT_EQ(DescribeOutcome(setup).find("output is in"), std::string::npos)
      << DescribeOutcome(setup);
  JobInfo ok = RanOn({"COMPLETED"});
  ok.exit_code.return_code = 0;
  EXPECT_EQ(DescribeOutcome(ok), "COMPLETED, exit code 0");
  EXPECT_EQ(DescribeOutcome(RanOn({"CANCELLED"})), "CANCELLED");
}

}  // namespace
}  // namespace slurmfleet::slurm
