// `slurmfleet serve` as a process against the real testbed: killed with SIGKILL at random moments
// while 100 submissions arrive through its REST API, and restarted each time. Every intent must
// end with exactly one job, no job carrying our tag may be left without its submission, and a
// SIGTERM must drain and exit 0. Needs the running testbed.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "fleet/job_tag.h"
#include "slurm/testbed_env.h"
#include "support/fault_proxy.h"
#include "support/listen_port.h"

namespace slurmfleet {
namespace {

using namespace std::chrono_literals;

constexpr const char* kAdminToken = "crash-test-admin-token-0123456789";
constexpr int kSubmissions = 100;

class ServeIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testbed_.Missing(), "");
    std::mt19937_64 seed_rng{std::random_device{}()};
    rng_.seed(seed_rng());
    instance_ = "crash" + std::to_string(seed_rng() % 1000000);
    port_ = test_support::DrawListenPort(seed_rng);
    // Between the daemon and slurmrestd: every submit POST is held 150 ms on its way, so that the
    // random kills often land while a POST is in flight (recorded as submitting, answer never seen)
    std::string host_port = testbed_.url.substr(testbed_.url.find("//") + 2);
    auto proxy =
        FaultProxy::Start(host_port.substr(0, host_port.find(':')),
                          std::stoi(host_port.substr(host_port.find(':') + 1)), seed_rng());
    ASSERT_TRUE(proxy) << proxy.error().ToString();
    proxy_ = std::move(*proxy);
    proxy_->AddRule({"POST", testbed_.Path("job/submit"), Fault::kDelay, 150ms, -1, 1.0});
    dir_ = std::filesystem::path(::testing::TempDir()) / instance_;
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "tokens") << "admin crashtest " << kAdminToken << "\n";
    std::filesystem::permissions(
        dir_ / "tokens", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::ofstream(dir_ / "slurmfleet.yaml")
        << "jenkins:\n  clouds:\n    - slurm:\n        name: testbed\n"
        << "        slurmRestApiUrl: " << proxy_->url()
        << "\n        apiVersion: " << testbed_.api_version << "\n"
        << "        credentials: {user: " << testbed_.user << ", jwtKeyFile: " << testbed_.jwt_key
        << "}\n"
        << "        jenkinsUrl: http://127.0.0.1:8080/\n"
        << "daemon:\n  listen: 127.0.0.1:" << port_
        << "\n  stateFile: " << (dir_ / "state.db").string() << "\n"
        << "  apiTokensFile: " << (dir_ / "tokens").string() << "\n  instance: " << instance_
        << "\n"
        << "  pollFastMs: 200\n  pollSlowMs: 1000\n  slurmTimeoutSeconds: 5\n  orphanGraceSeconds: "
           "5\n";
    slurm::TransportOptions t;
    t.base_url = testbed_.url;
    transport_ = std::move(*slurm::CurlTransport::Create(t));
    tokens_ = std::make_unique<auth::MintingTokenSource>(testbed_.jwt_key, testbed_.user, clock_);
    slurm::RestClientOptions ro;
    ro.api_version = testbed_.api_version;
    client_ = std::move(*slurm::RestClient::Connect(*transport_, *tokens_, ro));
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    // whatever is still ours in Slurm goes, whatever happened above
    auto jobs = client_->JobsChangedSince(std::nullopt);
    if (!jobs) return;
    for (const slurm::JobInfo& j : jobs->jobs) {
      auto tag = fleet::ParseTag(j.comment);
      if (tag && tag->instance == instance_) (void)client_->Cancel({j.job_id, j.sluid});
    }
  }

  // Starts the daemon on port_; when it exits at once (another process took the port since it was
  // drawn), on another port.
  void StartDaemon() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      const std::string listen = "daemon.listen=127.0.0.1:" + std::to_string(port_);
      pid_ = fork();
      ASSERT_GE(pid_, 0);
      if (pid_ == 0) {
        std::string log = (dir_ / "serve.log").string();
        freopen(log.c_str(), "a", stderr);
        execl(SLURMFLEET_BINARY, SLURMFLEET_BINARY, "serve", "--config",
              (dir_ / "slurmfleet.yaml").c_str(), "--set", listen.c_str(),
              static_cast<char*>(nullptr));
        _exit(127);
      }
      for (int i = 0; i < 100; ++i) {
        // ready, not only alive: the API answers (health) a moment before the engines run, and
        // a submission in between is refused with 503 not_ready
        if (auto r = Http().Get("/api/v1/ready"); r && r->status == 200) return;
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) break;
        std::this_thread::sleep_for(50ms);
      }
      if (waitpid(pid_, nullptr, WNOHANG) == 0) break;  // running, but not answering
      pid_ = -1;
      port_ = test_support::NextListenPort(port_);
    }
    FAIL() << "daemon did not come up; see " << (dir_ / "serve.log");
  }

  httplib::Client Http() {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(2);
    c.set_read_timeout(5);
    c.set_bearer_token_auth(kAdminToken);
    return c;
  }

  // POSTs submission `i`; false when the daemon did not answer (it was killed).
  bool Post(int i) {
    nlohmann::json body = {{"cloud", "testbed"},
                           {"kind", "job"},
                           {"key", "k" + std::to_string(i)},
                           {"job",
                            {{"name", "crash-" + instance_},
                             {"script", "#!/bin/bash\nsleep 600\n"},
                             {"current_working_directory", "/tmp"},
                             {"memory_per_node", 10},
                             {"hold", true}}}};
    auto r = Http().Post("/api/v1/submissions", body.dump(), "application/json");
    if (!r) return false;
    EXPECT_TRUE(r->status == 201 || r->status == 200) << r->status << " " << r->body;
    return true;
  }

  std::map<std::string, int> TaggedLiveJobs() {
    std::map<std::string, int> out;
    auto jobs = client_->JobsChangedSince(std::nullopt);
    EXPECT_TRUE(jobs) << jobs.error().ToString();
    if (!jobs) return out;
    for (const slurm::JobInfo& j : jobs->jobs) {
      auto tag = fleet::ParseTag(j.comment);
      if (tag && tag->instance == instance_ && j.state.base == slurm::BaseState::kPending)
        ++out[tag->key];
    }
    return out;
  }

  slurm::Testbed testbed_;
  SystemClock clock_;
  std::mt19937_64 rng_;
  std::string instance_;
  int port_ = 0;
  std::unique_ptr<FaultProxy> proxy_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  std::unique_ptr<slurm::CurlTransport> transport_;
  std::unique_ptr<auth::MintingTokenSource> tokens_;
  std::unique_ptr<slurm::RestClient> client_;
};

TEST_F(ServeIntegrationTest, KilledAtRandomMomentsEveryIntentEndsWithExactlyOneJob) {
  int next = 0, kills = 0;
  while (next < kSubmissions) {
    StartDaemon();
    ASSERT_FALSE(HasFatalFailure());
    // SIGKILL after a random 0.2-2 s, while submissions arrive and are being sent to Slurm
    std::uniform_int_distribution<int> delay(200, 2000);
    pid_t victim = pid_;
    std::thread killer([victim, d = delay(rng_)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(d));
      kill(victim, SIGKILL);
    });
    while (next < kSubmissions && Post(next)) {
      ++next;
      std::this_thread::sleep_for(40ms);  // spread the submissions over several kills
    }
    killer.join();
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    ++kills;
  }
  // a last, undisturbed run reconciles what the killed ones left unsure
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  // a POST repeated after a kill is idempotent: the same key yields the same submission
  ASSERT_TRUE(Post(kSubmissions - 1));
  auto deadline = std::chrono::steady_clock::now() + 120s;
  nlohmann::json list;
  for (;;) {
    auto r = Http().Get("/api/v1/submissions?limit=1000");
    ASSERT_TRUE(r && r->status == 200);
    list = nlohmann::json::parse(r->body);
    int settled = 0;
    for (const auto& s : list["submissions"]) settled += s["phase"] == "pending";
    if (settled == kSubmissions) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "not every submission reached pending: " << list.dump();
    std::this_thread::sleep_for(500ms);
  }
  EXPECT_EQ(list["submissions"].size(), static_cast<size_t>(kSubmissions));
  EXPECT_GE(kills, 2);
  std::cout << kills << " kills; " << proxy_->Count("POST", testbed_.Path("job/submit"))
            << " submit POSTs reached the proxy for " << kSubmissions << " submissions\n";

  std::map<std::string, int> jobs = TaggedLiveJobs();
  EXPECT_EQ(jobs.size(), static_cast<size_t>(kSubmissions));  // none lost, no orphans
  for (const auto& [key, n] : jobs) EXPECT_EQ(n, 1) << key << " has " << n << " jobs";
  for (int i = 0; i < kSubmissions; ++i) EXPECT_TRUE(jobs.contains("k" + std::to_string(i))) << i;

  // cancel everything through the API, then a SIGTERM drains and exits 0
  for (int i = 0; i < kSubmissions; ++i) {
    auto r = Http().Delete("/api/v1/submissions/k" + std::to_string(i));
    ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
  }
  deadline = std::chrono::steady_clock::now() + 60s;
  while (!TaggedLiveJobs().empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "jobs left after cancelling";
    std::this_thread::sleep_for(500ms);
  }
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(ServeIntegrationTest, AMisspeltOrForbiddenJobFieldIsA400AndNoJob) {
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  const nlohmann::json job = {{"name", "typo-" + instance_},
                              {"script", "#!/bin/bash\ntrue\n"},
                              {"current_working_directory", "/tmp"},
                              {"memory_per_node", 10},
                              {"hold", true}};
  for (const auto& [field, value, hint] : {std::tuple<std::string, nlohmann::json, std::string>{
                                               "constraint", "a100", "did you mean 'constraints'?"},
                                           {"nicee", 5, "did you mean 'nice'?"},
                                           {"requeue", true, "requeue=false"}}) {
    nlohmann::json body = {
        {"cloud", "testbed"}, {"kind", "job"}, {"key", "typo-" + field}, {"job", job}};
    body["job"][field] = value;
    auto r = Http().Post("/api/v1/submissions", body.dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    nlohmann::json answer = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_EQ(answer["error"]["where"], "job." + field) << r->body;
    EXPECT_NE(r->body.find(hint), std::string::npos) << r->body;
    EXPECT_EQ(Http().Get("/api/v1/submissions/typo-" + field)->status, 404);
  }
  nlohmann::json elsewhere = {
      {"cloud", "nosuch"}, {"kind", "job"}, {"key", "elsewhere"}, {"job", job}};
  auto r = Http().Post("/api/v1/submissions", elsewhere.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_NE(r->body.find("configured: testbed"), std::string::npos) << r->body;
  EXPECT_TRUE(TaggedLiveJobs().empty());
}

// A site with only batch runs: no Jenkins, no cloud. The batch section has its own engine, runs
// name no cloud, and a run without a partition goes to the section's.
TEST_F(ServeIntegrationTest, ABatchOnlyConfigurationRunsJobsWithItsPartition) {
  std::ofstream(dir_ / "slurmfleet.yaml")
      << "batch:\n  restUrl: " << testbed_.url << "\n  apiVersion: " << testbed_.api_version
      << "\n  credentials: {user: " << testbed_.user << ", jwtKeyFile: " << testbed_.jwt_key
      << "}\n  partition: nosuch\n  storageRoot: /tmp\n"
      << "daemon:\n  listen: 127.0.0.1:" << port_
      << "\n  stateFile: " << (dir_ / "state.db").string() << "\n"
      << "  apiTokensFile: " << (dir_ / "tokens").string() << "\n  instance: " << instance_
      << "\n  pollFastMs: 200\n";
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  auto clouds = Http().Get("/api/v1/clouds");
  ASSERT_TRUE(clouds);
  EXPECT_NE(clouds->body.find("\"batch\""), std::string::npos) << clouds->body;

  auto submit = [&](const std::string& key, std::optional<std::string> partition) {
    nlohmann::json job = {{"name", "batch-" + instance_},
                          {"script", "#!/bin/bash\ntrue\n"},
                          {"current_working_directory", "/tmp"},
                          {"memory_per_node", 10}};
    if (partition) job["partition"] = *partition;
    nlohmann::json body = {{"kind", "run"}, {"key", key}, {"job", job}};
    auto r = Http().Post("/api/v1/submissions", body.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201) << r->body;
    EXPECT_EQ(nlohmann::json::parse(r->body)["cloud"], "batch") << r->body;
  };
  auto final_phase = [&](const std::string& key) {
    for (int i = 0; i < 300; ++i) {
      auto r = Http().Get("/api/v1/submissions/" + key);
      if (r && r->status == 200) {
        nlohmann::json s = nlohmann::json::parse(r->body);
        if (s["terminal"] == true) return s;
      }
      std::this_thread::sleep_for(100ms);
    }
    return nlohmann::json{{"phase", "not terminal after 30 s"}};
  };
  submit("default-partition", std::nullopt);
  submit("own-partition", "debug");
  nlohmann::json defaulted = final_phase("default-partition");
  EXPECT_EQ(defaulted["phase"], "failed") << defaulted;
  EXPECT_NE(defaulted.value("failure", "").find("partition"), std::string::npos) << defaulted;
  nlohmann::json own = final_phase("own-partition");
  EXPECT_EQ(own["phase"], "succeeded") << own;
}

// A cloud taken out of the configuration while it has work: nothing tracks or cancels those jobs
// any more, and the restarted daemon says which they are and what to do.
TEST_F(ServeIntegrationTest, WorkOfACloudNoLongerConfiguredIsNamedAtStart) {
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(Post(0));
  std::string job_id;
  for (int i = 0; i < 100 && job_id.empty(); ++i) {
    auto r = Http().Get("/api/v1/submissions/k0");
    if (r && r->status == 200) {
      nlohmann::json sub = nlohmann::json::parse(r->body);
      if (sub.contains("job_id") && sub["job_id"].is_number()) job_id = sub["job_id"].dump();
    }
    if (job_id.empty()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(job_id.empty()) << "the submission got no job id";
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;

  std::ifstream in(dir_ / "slurmfleet.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  yaml.replace(yaml.find("name: testbed"), 13, "name: renamed");
  std::ofstream(dir_ / "slurmfleet.yaml") << yaml;
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  std::ifstream log(dir_ / "serve.log");
  const std::string said((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("warning: cloud testbed is not in the configuration, but the state holds 1 "
                      "Slurm job(s) (" +
                      job_id +
                      ") of it: nothing tracks or cancels them now. Put the cloud back "
                      "until they have ended, or cancel them on that cluster (scancel " +
                      job_id + ")"),
            std::string::npos)
      << said;
}

TEST_F(ServeIntegrationTest, ASecondDaemonOnTheSameStateFileRefusesToStart) {
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  std::string out = (dir_ / "second.log").string();
  std::string cmd = std::string(SLURMFLEET_BINARY) + " serve --config " +
                    (dir_ / "slurmfleet.yaml").string() +
                    " --set daemon.listen=127.0.0.1:" + std::to_string(port_ + 1) + " 2> " + out;
  int rc = std::system(cmd.c_str());
  EXPECT_NE(rc, 0);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("in use by another slurmfleet"), std::string::npos) << text;
}

}  // namespace
}  // namespace slurmfleet
