// `slurmfleet validate --connect` as an admin runs it before the first `serve`: against the real
// testbed's slurmrestd and the stand-in Jenkins (tests/jenkins/standin/). It must say what works,
// which label mode Jenkins allows, and for what does not work, which part and why, with the exit
// code of that failure. Needs the running testbed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "jenkins/standin/jenkins_standin.h"
#include "slurm/testbed_env.h"
#include "support/run_command.h"

namespace slurmfleet {
namespace {

class ValidateConnectIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testbed_.Missing(), "");
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("validate-connect-" + std::to_string(std::random_device{}() % 1000000));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void StartJenkins(bool administer) {
    standin::JenkinsStandin::Options o;
    o.administer = administer;
    jenkins_ = standin::JenkinsStandin::Start(o);
    ASSERT_NE(jenkins_, nullptr);
  }

  // A configuration with one cloud on `slurm_url` and the stand-in Jenkins, whose API token file
  // holds `token`; validated with --connect.
  CommandRun Validate(const std::string& slurm_url, const std::string& token) {
    std::ofstream(dir_ / "jenkins.token") << token << "\n";
    std::ofstream(dir_ / "c.yaml")
        << "jenkins:\n  url: " << jenkins_->url()
        << "\n  credentials: {user: admin, apiTokenFile: " << (dir_ / "jenkins.token").string()
        << "}\n  clouds:\n    - slurm:\n        name: tb\n        slurmRestApiUrl: " << slurm_url
        << "\n        credentials: {user: " << testbed_.user << ", jwtKeyFile: " << testbed_.jwt_key
        << "}\n        jobTemplates:\n          - name: cpu\n            label: linux\n"
        << "            agentLaunch: {downloadJar: true}\n";
    std::string command = std::string(SLURMFLEET_BINARY) + " validate --connect --config " +
                          (dir_ / "c.yaml").string();
    return RunCommand(command);
  }

  slurm::Testbed testbed_;
  std::filesystem::path dir_;
  std::unique_ptr<standin::JenkinsStandin> jenkins_;
};

TEST_F(ValidateConnectIntegrationTest, EverythingReachableSaysWhatItFound) {
  StartJenkins(/*administer=*/true);
  CommandRun ran = Validate(testbed_.url, jenkins_->api_token());
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_NE(ran.out.find("cloud tb (" + testbed_.url + "): ok: Slurm "), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("cluster testbed"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("minted for " + testbed_.user), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("jenkins (" + jenkins_->url() + "): ok: Jenkins "), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("queue labels exact, from /scriptText"), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find(jenkins_->api_token()), std::string::npos) << "the token was printed";
}

TEST_F(ValidateConnectIntegrationTest, AnAccountThatMayNotAdministerIsFineButSaysSo) {
  StartJenkins(/*administer=*/false);
  CommandRun ran = Validate(testbed_.url, jenkins_->api_token());
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_NE(ran.out.find("queue labels from task.labelExpression and the `why` texts"),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("Overall/Administer"), std::string::npos) << ran.out;
}

TEST_F(ValidateConnectIntegrationTest, AWrongJenkinsTokenIsAnAuthFailureNamingJenkins) {
  StartJenkins(/*administer=*/true);
  CommandRun ran = Validate(testbed_.url, "11" + std::string(32, '0'));
  EXPECT_EQ(ran.exit_code, 4) << ran.out;
  EXPECT_NE(ran.out.find("cloud tb (" + testbed_.url + "): ok"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("jenkins (" + jenkins_->url() + "): FAILED: "), std::string::npos)
      << ran.out;
}

TEST_F(ValidateConnectIntegrationTest, AnUnreachableSlurmrestdNamesTheCloudAndTheSocket) {
  StartJenkins(/*administer=*/true);
  const std::string socket = (dir_ / "no-slurmrestd.socket").string();
  CommandRun ran = Validate("unix:" + socket, jenkins_->api_token());
  EXPECT_EQ(ran.exit_code, 5) << ran.out;
  EXPECT_NE(ran.out.find("cloud tb (unix:" + socket + "): FAILED: "), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("listens on that socket"), std::string::npos) << ran.out;
}

}  // namespace
}  // namespace slurmfleet
