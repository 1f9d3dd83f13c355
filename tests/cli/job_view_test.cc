#include "cli/job_view.h"

#include <gtest/gtest.h>

namespace slurmfleet::cli {
namespace {

slurm::JobInfo FailedJob() {
  slurm::JobInfo j;
  j.job_id = 7;
  j.name = "build";
  j.user_name = "ci";
  j.state = slurm::ParseJobState({"FAILED"});
  j.state_reason = "NonZeroExitCode";
  j.exit_code.return_code = 3;
  j.current_working_directory = "/w";
  j.standard_output = "/w/out-7.out";
  j.standard_error = "/w/err-7.err";
  j.batch_host = "n1";
  j.nodes = "n1";
  return j;
}

TEST(JobViewTest, JsonSaysWhereTheFilesAreAndWhatHappened) {
  nlohmann::json j = JobToJson(FailedJob());
  EXPECT_EQ(j["job_id"], 7);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["exit_code"]["return_code"], 3);
  EXPECT_TRUE(j["exit_code"]["signal"].is_null());
  EXPECT_EQ(j["stdout"], "/w/out-7.out");
  EXPECT_EQ(j["stderr"], "/w/err-7.err");
  EXPECT_EQ(j["batch_host"], "n1");
  EXPECT_EQ(j["outcome"],
            "FAILED, exit code 3 (Slurm: NonZeroExitCode); the script's output is in "
            "/w/out-7.out, its errors in /w/err-7.err on node n1");
  EXPECT_FALSE(j.contains("het_job_id"));
}

TEST(JobViewTest, TimesPastTheYear9999AreShownAsSlurmSentThem) {
  slurm::JobInfo j = FailedJob();
  j.submit_time = slurm::Seconds(std::chrono::seconds(1'700'000'000));
  j.end_time = slurm::Seconds(std::chrono::seconds(100'000'000'000'000'000));
  nlohmann::json out = JobToJson(j);
  EXPECT_EQ(out["submit_time"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(out["end_time"], 100'000'000'000'000'000);
}

TEST(JobViewTest, APendingJobHasNoHostAndItsOutcomeNamesTheReason) {
  slurm::JobInfo pending;
  pending.job_id = 8;
  pending.state = slurm::ParseJobState({"PENDING"});
  pending.state_reason = "Priority";
  pending.het_job_id = 8;
  pending.het_job_offset = 0;
  nlohmann::json j = JobToJson(pending);
  EXPECT_EQ(j["batch_host"], "");
  EXPECT_EQ(j["stderr"], "");
  EXPECT_NE(j["outcome"].get<std::string>().find("Priority"), std::string::npos) << j["outcome"];
  EXPECT_EQ(j["het_job_id"], 8);
  EXPECT_EQ(j["het_job_offset"], 0);
  EXPECT_FALSE(IsFinal(pending.state));
}

TEST(JobViewTest, OnlyStatesThatCanNoLongerChangeAreFinal) {
  EXPECT_TRUE(IsFinal(slurm::ParseJobState({"COMPLETED"})));
  EXPECT_TRUE(IsFinal(slurm::ParseJobState({"FAILED"})));
  EXPECT_FALSE(IsFinal(slurm::ParseJobState({"RUNNING"})));
  EXPECT_FALSE(IsFinal(slurm::ParseJobState({"SUSPENDED"})));
  EXPECT_FALSE(IsFinal(slurm::ParseJobState({"COMPLETED", "COMPLETING"})));
  EXPECT_FALSE(IsFinal(slurm::ParseJobState({"CANCELLED", "STAGE_OUT"})));
}

TEST(JobViewTest, LinesShowTheHeterogeneousComponent) {
  slurm::JobInfo j = FailedJob();
  j.het_job_id = 7;
  j.het_job_offset = 1;
  std::string line = JobLine(j);
  EXPECT_EQ(line.rfind("7+1 ", 0), 0u) << line;
  EXPECT_NE(line.find("FAILED"), std::string::npos) << line;
  EXPECT_NE(JobHeaderLine().find("NODES"), std::string::npos);
}

}  // namespace
}  // namespace slurmfleet::cli
