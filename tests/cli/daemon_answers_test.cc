// `slurmfleet agents` and `activities` as processes against an HTTP server that answers in shapes
// the daemon's API never has (another service at --daemon, another version): a clear error and
// exit 1, never an abort.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "support/run_command.h"

namespace slurmfleet {
namespace {

CommandRun Slurmfleet(const std::string& args) {
  return RunCommand(std::string(SLURMFLEET_BINARY) + " " + args + " 2>&1");
}

class DaemonAnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        params_ = req.params;
      }
      res.status = status_;
      res.set_content(body_, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    token_ = ::testing::TempDir() + "/daemon-answers.token";
    std::ofstream(token_) << "some-token\n";
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  CommandRun Run(const std::string& command, int status, std::string body) {
    status_ = status;
    body_ = std::move(body);
    return Slurmfleet(command + " --daemon http://127.0.0.1:" + std::to_string(port_) +
                      " --api-token-file " + token_);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::string token_;
  int status_ = 200;
  std::string body_;
  std::mutex mu_;
  httplib::Params params_;  // of the last request; guarded by mu_
};

TEST_F(DaemonAnswersTest, AnswersOfAnotherShapeAreErrorsNotAborts) {
  const std::map<std::string, std::pair<int, std::string>> answers = {
      {"a list", {200, "[1,2,3]"}},
      {"a job id as text", {200, R"({"agents":[{"job_id":"12"}]})"}},
      {"builds as text", {200, R"({"agents":[{"builds":"x"}]})"}},
      {"no agents key", {200, R"({"other":1})"}},
      {"an error that is a string", {500, R"({"error":"boom"})"}},
      {"an error message that is a number", {400, R"({"error":{"message":5}})"}},
  };
  for (const auto& [what, answer] : answers) {
    CommandRun r = Run("agents", answer.first, answer.second);
    EXPECT_EQ(r.exit_code, 1) << what << ": " << r.out;
    EXPECT_NE(r.out.find("error:"), std::string::npos) << what << ": " << r.out;
  }
  for (const std::string body :
       {R"({"activities":5})", R"({"activities":[],"next_after":"x"})", "[]"}) {
    CommandRun r = Run("activities", 200, body);
    EXPECT_EQ(r.exit_code, 1) << body << ": " << r.out;
    EXPECT_NE(r.out.find("error:"), std::string::npos) << body << ": " << r.out;
  }
}

TEST_F(DaemonAnswersTest, AnErrorBodyOfTheApiIsShown) {
  CommandRun r =
      Run("agents", 403,
          R"({"error":{"code":"forbidden","message":"read scope only","where":"token"}})");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("read scope only"), std::string::npos) << r.out;
}

TEST_F(DaemonAnswersTest, FilterValuesReachTheDaemonAsTheyWereGiven) {
  CommandRun r = Run("activities --agent 'a&limit=5' --cloud 'x#y'", 200,
                     R"({"activities":[],"next_after":0,"more":false})");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::lock_guard lock(mu_);
  EXPECT_EQ(params_.count("limit"), 1u);
  EXPECT_EQ(params_.count("agent"), 1u);
  EXPECT_EQ(params_.find("agent")->second, "a&limit=5");
  EXPECT_EQ(params_.count("cloud"), 1u);
  EXPECT_EQ(params_.find("cloud")->second, "x#y");
}

TEST(DaemonUrlTest, ADaemonUrlThatIsNotHttpIsRefused) {
  CommandRun r = Slurmfleet("agents --daemon ftp://127.0.0.1:1 --api-token-file /dev/null");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--daemon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("is not an http:// or https:// URL"), std::string::npos) << r.out;
}

// The check every base URL gets (base/url.h): a host, a port from 1 to 65535, no fragment.
TEST(DaemonUrlTest, ADaemonUrlWithoutAHostOrWithABadPortIsRefused) {
  const std::pair<std::string, std::string> cases[] = {
      {"http:///",
       "'http:///' has no host; write the host after '//', e.g. "
       "http://127.0.0.1:8470"},
      {"http://127.0.0.1:99999", "has a port that is not a number from 1 to 65535"},
      {"http://127.0.0.1:0", "has a port that is not a number from 1 to 65535"},
      {"http://127.0.0.1:8470/#x", "has a fragment ('#')"},
  };
  for (const auto& [url, expected] : cases) {
    CommandRun r = Slurmfleet("agents --daemon '" + url + "' --api-token-file /dev/null");
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_NE(r.out.find("--daemon"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  }
}

TEST(DaemonUrlTest, ErrorsQuoteTheDaemonUrlWithoutItsPassword) {
  const std::string token = ::testing::TempDir() + "/daemon-url.token";
  std::ofstream(token) << "some-token\n";
  for (const std::string url :
       {"ftp://u:SECRETMARK@127.0.0.1:1", "http://u:SECRETMARK@127.0.0.1:1"}) {
    CommandRun r = Slurmfleet("agents --daemon " + url + " --api-token-file " + token);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out.find("SECRETMARK"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("://***@127.0.0.1:1"), std::string::npos) << r.out;
  }
}

TEST(DaemonUrlTest, ATokenFileThatIsADirectoryIsNamedSo) {
  CommandRun r =
      Slurmfleet("agents --daemon http://127.0.0.1:1 --api-token-file " + ::testing::TempDir());
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace slurmfleet
