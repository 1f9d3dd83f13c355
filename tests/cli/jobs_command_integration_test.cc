// `slurmfleet jobs submit --follow --output-root` as a user runs it, against the real testbed: a
// script that fails says how, names the files it wrote (whatever filename pattern it used) and
// shows what is in them; a job that fails before its script runs says why, and does not look
// for files that were never written. Needs the running testbed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "slurm/testbed_env.h"
#include "support/run_command.h"

namespace slurmfleet {
namespace {

class JobsCommandIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testbed_.Missing(), "");
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("jobs-cli-" + std::to_string(std::random_device{}() % 1000000));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "job.sh") << "#!/bin/bash\necho to-the-output\necho to-the-errors >&2\n"
                                      "exit 3\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs the CLI with the testbed's coordinates; stdout is kept, stderr goes to the test's log.
  CommandRun Submit(const std::string& job_json, const std::string& cwd,
                    const std::string& script = "job.sh", const std::string& output_root = "",
                    int follow_timeout_s = 60) {
    return RunCommand(Cli("jobs submit") + " --script " + (dir_ / script).string() +
                      " --name cli-pattern --cwd " + cwd + " --job '" + job_json +
                      "' --follow --follow-timeout " + std::to_string(follow_timeout_s) +
                      " --output-root " + (output_root.empty() ? testbed_.root : output_root) +
                      " --json");
  }
  // The CLI with the testbed's coordinates, for `command`.
  std::string Cli(const std::string& command) const {
    return std::string(SLURMFLEET_BINARY) + " " + command + " --url " + testbed_.url +
           " --api-version " + testbed_.api_version + " --user " + testbed_.user + " --jwt-key " +
           testbed_.jwt_key;
  }

  slurm::Testbed testbed_;
  std::filesystem::path dir_;
};

TEST_F(JobsCommandIntegrationTest, AFailedScriptNamesAndShowsBothFiles) {
  CommandRun ran =
      Submit(R"({"memory_per_node": 100, "time_limit": 5, "standard_output": "cli-%j-%s-%t.out", )"
             R"("standard_error": "cli-%j-%n.err"})",
             "/home/" + testbed_.user + "/jobs");
  ASSERT_EQ(ran.exit_code, 1) << ran.out;
  nlohmann::json job = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << ran.out;
  const std::string id = std::to_string(job["job_id"].get<uint32_t>());
  const std::string dir = "/home/" + testbed_.user + "/jobs/";
  EXPECT_EQ(job["state"], "FAILED");
  EXPECT_EQ(job["stdout"], dir + "cli-" + id + "-batch-0.out");
  EXPECT_EQ(job["stderr"], dir + "cli-" + id + "-0.err");
  EXPECT_EQ(job["output"], "to-the-output\n");
  EXPECT_EQ(job["errors"], "to-the-errors\n");
  EXPECT_EQ(job["outcome"],
            "FAILED, exit code 3 (Slurm: NonZeroExitCode); the script's output is in " +
                job["stdout"].get<std::string>() + ", its errors in " +
                job["stderr"].get<std::string>() + " on node " +
                job["batch_host"].get<std::string>());
}

TEST_F(JobsCommandIntegrationTest, AJobThatCouldNotStartSaysWhyAndReadsNoFile) {
  CommandRun ran = Submit(R"({"memory_per_node": 100, "time_limit": 5})", "/nonexistent/cli");
  ASSERT_EQ(ran.exit_code, 1) << ran.out;
  nlohmann::json job = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << ran.out;
  EXPECT_EQ(job["state"], "FAILED");
  EXPECT_NE(job["outcome"].get<std::string>().find("working directory '/nonexistent/cli'"),
            std::string::npos)
      << job["outcome"];
  EXPECT_FALSE(job.contains("output")) << ran.out;
}

// A script waiting on --follow must tell "still running" from a failed job (1) and from an
// unreachable slurmrestd (5).
TEST_F(JobsCommandIntegrationTest, AFollowTimeoutSaysTheJobStillRunsWithItsOwnExitCode) {
  CommandRun ran = Submit(R"({"memory_per_node": 100, "time_limit": 5, "hold": true})",
                          "/home/" + testbed_.user + "/jobs", "job.sh", "", 1);
  nlohmann::json job = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_TRUE(job.is_object() && job.contains("job_id")) << ran.out;
  EXPECT_EQ(
      RunCommand(Cli("jobs cancel " + std::to_string(job["job_id"].get<uint32_t>()))).exit_code, 0);
  EXPECT_EQ(ran.exit_code, 6) << ran.out;
  EXPECT_EQ(job["state"], "PENDING") << ran.out;
  EXPECT_FALSE(job.contains("error")) << ran.out;
}

TEST_F(JobsCommandIntegrationTest, OnlyTheEndOfALongOutputIsShown) {
  std::ofstream(dir_ / "long.sh")
      << "#!/bin/bash\nfor i in $(seq 1 3000); do echo \"line $i\"; done\n";
  CommandRun ran = Submit(R"({"memory_per_node": 100, "time_limit": 5})",
                          "/home/" + testbed_.user + "/jobs", "long.sh");
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  nlohmann::json job = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << ran.out;
  const std::string output = job["output"];
  EXPECT_TRUE(output.starts_with("line 1001\n")) << output.substr(0, 40);
  EXPECT_TRUE(output.ends_with("line 3000\n"));
  std::string whole;
  for (int i = 1; i <= 1000; ++i) whole += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(job["output_skipped_bytes"], whole.size());

  // Output that cannot be read here says so, and the job's result stays what it was.
  ran = Submit(R"({"memory_per_node": 100, "time_limit": 5})", "/home/" + testbed_.user + "/jobs",
               "long.sh", (dir_ / "not-mounted").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  job = nlohmann::json::parse(ran.out, nullptr, false);
  EXPECT_EQ(job["state"], "COMPLETED");
  EXPECT_FALSE(job.contains("output"));
  EXPECT_NE(job["output_error"].get<std::string>().find("No such file or directory"),
            std::string::npos)
      << ran.out;
}

// slurmrestd only warns about a field it does not know and runs the job without it: a typo such
// as `constraint` would put the job on any node. It must not reach Slurm.
TEST_F(JobsCommandIntegrationTest, AMisspeltOrForbiddenFieldIsRefusedBeforeSubmitting) {
  struct Case {
    std::string job;
    std::string where;
    std::string message;
  };
  for (const Case& c :
       {Case{R"({"memory_per_node": 100, "constraint": "a100"})", "--job #1.constraint",
             "unknown job_desc field 'constraint' in API " + testbed_.api_version +
                 " (did you mean 'constraints'?)"},
        Case{R"({"partiton": "debug"})", "--job #1.partiton", "(did you mean 'partition'?)"},
        Case{R"({"requeue": true})", "--job #1.requeue",
             "slurmfleet submits every job with "
             "requeue=false"}}) {
    CommandRun ran = Submit(c.job, "/tmp");
    EXPECT_EQ(ran.exit_code, 3) << c.job << ": " << ran.out;
    nlohmann::json body = nlohmann::json::parse(ran.out, nullptr, false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << ran.out;
    EXPECT_EQ(body["error"]["where"], c.where);
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.message), std::string::npos)
        << body["error"]["message"];
    EXPECT_EQ(ran.out.find("job_id"), std::string::npos) << "nothing was submitted: " << ran.out;
  }
}

// A key that is not slurmctld's cannot be fixed by refreshing: the message says what to check.
TEST_F(JobsCommandIntegrationTest, ATokenMintedFromAWrongKeyNamesTheKeyNotARefresh) {
  const std::filesystem::path key = dir_ / "wrong.key";
  std::ofstream(key) << std::string(32, 'x');
  std::filesystem::permissions(key, std::filesystem::perms::owner_read);
  CommandRun ran = RunCommand(std::string(SLURMFLEET_BINARY) + " jobs list --url " + testbed_.url +
                              " --api-version " + testbed_.api_version + " --user " +
                              testbed_.user + " --jwt-key " + key.string() + " 2>&1");
  EXPECT_EQ(ran.exit_code, 4) << ran.out;
  EXPECT_NE(ran.out.find("check that " + key.string() +
                         " is slurmctld's JWT key (AuthAltParameters=jwt_key=... in slurm.conf)"),
            std::string::npos)
      << ran.out;
  EXPECT_EQ(ran.out.find("refresh it"), std::string::npos) << ran.out;
}

}  // namespace
}  // namespace slurmfleet
