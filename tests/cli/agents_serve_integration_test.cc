// `slurmfleet serve` as a process, provisioning Jenkins agents end to end: the stand-in Jenkins
// (tests/jenkins/standin/) runs in this test process, the daemon is the real binary, and the
// agents are real Slurm jobs on the testbed that run the stand-in agent (standin-java, installed
// into the testbed's rootfs as `java`). While eight queued builds are being served, the daemon is
// killed with SIGKILL at random moments and restarted on the same state file. In the end every
// build succeeded, within instanceCap, and nothing is left: no node in Jenkins, no live Slurm job
// with this instance's tag, every agent done or failed. `slurmfleet agents` and `slurmfleet
// activities` then show what happened. Needs the running testbed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet/job_tag.h"
#include "jenkins/standin/jenkins_standin.h"
#include "jenkins/standin/standin_agent_install.h"
#include "slurm/testbed_env.h"
#include "support/listen_port.h"

namespace slurmfleet {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using standin::InstallStandinAgent;
constexpr const char* kStandinDir = standin::kStandinAgentDir;
constexpr const char* kAdminToken = "agents-e2e-admin-token-0123456789";
constexpr const char* kReadToken = "agents-e2e-read-token-9876543210";
constexpr int kBuilds = 8;
constexpr size_t kInstanceCap = 4;
constexpr int kKills = 3;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class AgentsServeIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testbed_.Missing(), "");
    InstallStandinAgent(testbed_.root);
    std::mt19937_64 seed_rng{std::random_device{}()};
    rng_.seed(seed_rng());
    instance_ = "e2eag" + std::to_string(seed_rng() % 1000000000);
    dir_ = fs::path(::testing::TempDir()) / instance_;
    fs::create_directories(dir_);
    log_ = dir_ / "serve.log";
    port_ = test_support::DrawListenPort(seed_rng);

    jenkins_ = standin::JenkinsStandin::Start({});
    ASSERT_NE(jenkins_, nullptr);
    std::ofstream(dir_ / "jenkins.token") << jenkins_->api_token() << "\n";
    std::ofstream(dir_ / "tokens")
        << "admin e2e " << kAdminToken << "\nread cli " << kReadToken << "\n";
    fs::permissions(dir_ / "tokens", fs::perms::owner_read | fs::perms::owner_write);
    std::ofstream(dir_ / "cli.token") << kReadToken << "\n";

    std::ofstream(dir_ / "slurmfleet.yaml")
        << "jenkins:\n"
        << "  url: " << jenkins_->url() << "\n"
        << "  credentials: {user: " << jenkins_->user()
        << ", apiTokenFile: " << (dir_ / "jenkins.token").string() << "}\n"
        << "  pollMs: 300\n"
        << "  clouds:\n"
        << "    - slurm:\n"
        << "        name: tb\n"
        << "        slurmRestApiUrl: " << testbed_.url << "\n"
        << "        apiVersion: " << testbed_.api_version << "\n"
        << "        credentials: {user: " << testbed_.user << ", jwtKeyFile: " << testbed_.jwt_key
        << "}\n"
        << "        maxAgents: 10\n"
        << "        jobTemplates:\n"
        << "          - name: cpu\n"
        << "            label: linux\n"
        << "            workingDirectory: /tmp/jenkins\n"
        << "            memoryPerNode: 10\n"
        << "            instanceCap: " << kInstanceCap << "\n"
        << "            agentLaunch: {javaPath: " << kStandinDir
        << "/java, jarPath: " << kStandinDir << "/agent.jar}\n"
        << "daemon:\n"
        << "  stateFile: " << (dir_ / "state.db").string() << "\n"
        << "  apiTokensFile: " << (dir_ / "tokens").string() << "\n"
        << "  instance: " << instance_ << "\n"
        << "  pollFastMs: 300\n"
        << "  pollSlowMs: 2000\n"
        << "  orphanGraceSeconds: 20\n";

    slurm::TransportOptions t;
    t.base_url = testbed_.url;
    auto transport = slurm::CurlTransport::Create(t);
    ASSERT_TRUE(transport) << transport.error().ToString();
    transport_ = std::move(*transport);
    tokens_ = std::make_unique<auth::MintingTokenSource>(testbed_.jwt_key, testbed_.user, clock_);
    slurm::RestClientOptions ro;
    ro.api_version = testbed_.api_version;
    auto client = slurm::RestClient::Connect(*transport_, *tokens_, ro);
    ASSERT_TRUE(client) << client.error().ToString();
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    // whatever a failed run left: nothing of this instance may stay in Slurm
    if (client_) {
      for (const slurm::JobInfo& j : LiveTaggedJobs()) (void)client_->Cancel({j.job_id, j.sluid});
    }
    jenkins_.reset();
  }

  // Starts `slurmfleet serve` on port_ with stderr appended to serve.log and waits until it
  // logged that it serves and its API answers /health. When it exits at once because another
  // process took the port, on another one (the CLI and the API are reached through port_).
  void StartDaemon() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      const uintmax_t log_offset = fs::exists(log_) ? fs::file_size(log_) : 0;
      if (StartDaemonOnPort()) return;
      if (pid_ > 0 || ::testing::Test::HasFatalFailure()) break;
      std::string text = ReadFile(log_).substr(log_offset);
      if (text.find("Address already in use") == std::string::npos) break;
      port_ = test_support::NextListenPort(port_);
    }
    FAIL() << "slurmfleet serve did not come up" << Diagnostics();
  }

  // true when it serves; false with pid_ = -1 when it exited, false with pid_ set when it did not
  // answer within 30 s.
  bool StartDaemonOnPort() {
    const std::string config = (dir_ / "slurmfleet.yaml").string();
    const std::string listen = "daemon.listen=127.0.0.1:" + std::to_string(port_);
    const uintmax_t log_offset = fs::exists(log_) ? fs::file_size(log_) : 0;
    // everything the child needs is prepared before fork: this process has threads
    int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
      ADD_FAILURE() << "cannot open " << log_;
      return false;
    }
    const char* argv[] = {SLURMFLEET_BINARY, "serve",       "--config", config.c_str(), "--set",
                          listen.c_str(),    "--log-level", "debug",    nullptr};
    pid_ = fork();
    if (pid_ < 0) {
      ADD_FAILURE() << "fork failed";
      close(log_fd);
      return false;
    }
    if (pid_ == 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      close_range(3, ~0U, 0);  // not the stand-in's sockets
      execv(SLURMFLEET_BINARY, const_cast<char* const*>(argv));
      _exit(127);
    }
    close(log_fd);
    ++starts_;
    const std::string marker = "serving on 127.0.0.1:" + std::to_string(port_);
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        std::cerr << "slurmfleet serve exited at start (status " << status << ")\n";
        return false;
      }
      std::string text = ReadFile(log_);
      text = text.size() > log_offset ? text.substr(log_offset) : "";
      if (text.find(marker) != std::string::npos) {
        if (auto r = Http().Get("/api/v1/health"); r && r->status == 200) return true;
      }
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  void KillDaemon() {
    ASSERT_GT(pid_, 0);
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the daemon had exited on its own (status " << status << ")" << Diagnostics();
  }

  httplib::Client Http() {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(2);
    c.set_read_timeout(5);
    c.set_bearer_token_auth(kAdminToken);
    return c;
  }

  // GET of the daemon's API; nullopt when it does not answer 200.
  std::optional<nlohmann::json> Get(const std::string& path) {
    auto r = Http().Get(path);
    if (!r || r->status != 200) return std::nullopt;
    return nlohmann::json::parse(r->body, nullptr, false);
  }

  std::vector<slurm::JobInfo> LiveTaggedJobs() {
    std::vector<slurm::JobInfo> out;
    auto jobs = client_->JobsChangedSince(std::nullopt);
    EXPECT_TRUE(jobs) << jobs.error().ToString();
    if (!jobs) return out;
    for (const slurm::JobInfo& j : jobs->jobs) {
      auto tag = fleet::ParseTag(j.comment);
      bool live =
          j.state.base == slurm::BaseState::kPending || j.state.base == slurm::BaseState::kRunning;
      if (tag && tag->instance == instance_ && live) out.push_back(j);
    }
    return out;
  }

  // What to read when an assertion fails: the daemon's log (all runs) and its activities.
  std::string Diagnostics() {
    std::string log = ReadFile(log_);
    constexpr size_t kMaxLog = 64 * 1024;
    if (log.size() > kMaxLog) log = "[...]\n" + log.substr(log.size() - kMaxLog);
    std::string out = "\n--- slurmfleet serve log (" + log_.string() + ", " +
                      std::to_string(starts_) + " starts) ---\n" + log;
    out += "--- activities ---\n";
    if (pid_ <= 0) return out + "(daemon not running)\n";
    int64_t after = 0;
    for (int page = 0; page < 20; ++page) {
      auto body = Get("/api/v1/activities?limit=1000&after=" + std::to_string(after));
      if (!body || body->is_discarded()) return out + "(daemon did not answer)\n";
      for (const auto& e : (*body)["activities"]) {
        out += e.value("at", "") + " " + e.value("level", "") + " " + e.value("key", "") + " " +
               e.value("type", "") + ": " + e.value("message", "") + "\n";
      }
      after = body->value("next_after", after);
      if (!body->value("more", false)) break;
    }
    return out;
  }

  // Runs the CLI with the arguments; its exit code and stdout+stderr.
  std::pair<int, std::string> RunCli(const std::string& args) {
    std::string cmd = std::string(SLURMFLEET_BINARY) + " " + args +
                      " --daemon http://127.0.0.1:" + std::to_string(port_) + " --api-token-file " +
                      (dir_ / "cli.token").string() + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return {-1, "popen failed"};
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  slurm::Testbed testbed_;
  SystemClock clock_;
  std::mt19937_64 rng_;
  std::string instance_;
  fs::path dir_;
  fs::path log_;
  int port_ = 0;
  pid_t pid_ = -1;
  int starts_ = 0;
  std::unique_ptr<standin::JenkinsStandin> jenkins_;
  std::unique_ptr<slurm::Transport> transport_;
  std::unique_ptr<auth::TokenSource> tokens_;
  std::unique_ptr<slurm::RestClient> client_;
};

TEST_F(AgentsServeIntegrationTest, KilledAndRestartedMidFlightLeaksNoNodeAndNoJob) {
  const auto began = std::chrono::steady_clock::now();
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  for (int i = 0; i < kBuilds; ++i) {
    jenkins_->EnqueueFreestyle("e2e-" + std::to_string(i), "linux", 3s);
  }
  // The first kill comes once agents are on their way (a node exists), then every 0.5-2 s (the
  // builds take about 8 s).
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.nodes_created >= 1; }, 30s))
      << "no node created in Jenkins" << Diagnostics();
  std::uniform_int_distribution<int> delay_ms(500, 2000);
  for (int k = 0; k < kKills; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng_)));
    auto s = jenkins_->Stats();
    std::cout << "kill " << k + 1 << ": " << s.nodes.size() << " nodes (" << s.ConnectedNodes()
              << " connected), " << s.running_builds.size() << " builds running, "
              << s.completed_builds.size() << " completed, " << s.queue_length << " queued\n";
    KillDaemon();
    ASSERT_FALSE(HasFatalFailure());
    StartDaemon();
    ASSERT_FALSE(HasFatalFailure());
  }

  // Every build ran, successfully, without the cap ever being exceeded.
  ASSERT_TRUE(jenkins_->WaitFor(
      [](const auto& s) { return s.completed_builds.size() == static_cast<size_t>(kBuilds); },
      240s))
      << jenkins_->StatsJson() << Diagnostics();
  auto stats = jenkins_->Stats();
  for (const auto& b : stats.completed_builds) {
    EXPECT_EQ(b.result, "SUCCESS")
        << b.job << " #" << b.number << " on " << b.built_on << Diagnostics();
  }
  EXPECT_LE(stats.max_nodes_seen, kInstanceCap) << jenkins_->StatsJson() << Diagnostics();

  // Nothing left: no node in Jenkins, no live job of ours in Slurm, every agent ended.
  EXPECT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.nodes.empty(); }, 60s))
      << jenkins_->StatsJson() << Diagnostics();
  auto deadline = std::chrono::steady_clock::now() + 60s;
  std::vector<slurm::JobInfo> live = LiveTaggedJobs();
  while (!live.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(500ms);
    live = LiveTaggedJobs();
  }
  std::string live_text;
  for (const slurm::JobInfo& j : live)
    live_text += j.name + " (job " + std::to_string(j.job_id) + ") ";
  EXPECT_TRUE(live.empty()) << "live Slurm jobs of instance " << instance_ << ": " << live_text
                            << Diagnostics();

  nlohmann::json agents;
  deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    auto body = Get("/api/v1/agents?all=true&limit=1000");
    ASSERT_TRUE(body && !body->is_discarded()) << "GET /api/v1/agents failed" << Diagnostics();
    agents = (*body)["agents"];
    bool all_final = true;
    for (const auto& a : agents) {
      all_final = all_final && (a["phase"] == "done" || a["phase"] == "failed");
    }
    if (all_final || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_GE(agents.size(), static_cast<size_t>(kBuilds)) << agents.dump(2) << Diagnostics();
  int builds_on_agents = 0;
  for (const auto& a : agents) {
    EXPECT_TRUE(a["phase"] == "done" || a["phase"] == "failed")
        << a.value("name", "") << " is " << a.value("phase", "") << Diagnostics();
    builds_on_agents += a.value("builds", 0);
  }
  EXPECT_EQ(builds_on_agents, kBuilds) << agents.dump(2) << Diagnostics();

  // The CLI shows them.
  auto [agents_rc, agents_out] = RunCli("agents --all --limit 1000");
  EXPECT_EQ(agents_rc, 0) << agents_out;
  EXPECT_NE(agents_out.find("AGENT"), std::string::npos) << agents_out;
  auto [live_rc, live_out] = RunCli("agents");
  EXPECT_EQ(live_rc, 0) << live_out;
  EXPECT_NE(live_out.find("no live agents"), std::string::npos) << live_out;
  auto [act_rc, act_out] = RunCli("activities --limit 1000");
  EXPECT_EQ(act_rc, 0) << act_out;
  for (const auto& a : agents) {
    const std::string name = a.value("name", "");
    EXPECT_NE(agents_out.find(name), std::string::npos) << name << " missing in:\n" << agents_out;
    EXPECT_NE(act_out.find(name), std::string::npos) << name << " missing in:\n" << act_out;
  }
  EXPECT_NE(act_out.find("connected"), std::string::npos) << act_out;
  EXPECT_NE(act_out.find("ended"), std::string::npos) << act_out;
  std::cout << "$ slurmfleet agents --all\n" << agents_out;

  // The debug log told each item's decision and the engine's passes, and no secret.
  const std::string log = ReadFile(log_);
  EXPECT_NE(log.find("debug: queue item "), std::string::npos) << Diagnostics();
  EXPECT_NE(log.find("from /scriptText: a new agent from cloud tb, template cpu"),
            std::string::npos)
      << Diagnostics();
  EXPECT_NE(log.find("debug: cloud tb: pass "), std::string::npos) << Diagnostics();
  EXPECT_EQ(log.find(jenkins_->api_token()), std::string::npos);
  EXPECT_EQ(log.find(kAdminToken), std::string::npos);
  EXPECT_EQ(log.find("eyJ"), std::string::npos) << "a JWT in the log";

  // A SIGTERM after all that drains and exits 0.
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << Diagnostics();
  std::cout << kKills << " kills, " << starts_ << " starts; " << stats.nodes_created
            << " nodes created, at most " << stats.max_nodes_seen << " at once; " << agents.size()
            << " agents; "
            << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                began)
                   .count()
            << " s\n";
}

// SIGHUP re-reads the token file even when the configuration beside it no longer loads: a leaked
// token is revoked by editing one file, whatever else is half-edited. What GET /clouds reports
// is the cap in force after a reload, not the one at start.
TEST_F(AgentsServeIntegrationTest, SighupRevokesATokenEvenWithABrokenConfigurationAndShowsNewCaps) {
  StartDaemon();
  ASSERT_FALSE(HasFatalFailure());
  const fs::path config = dir_ / "slurmfleet.yaml";
  std::stringstream text;
  text << std::ifstream(config).rdbuf();
  const std::string original = text.str();
  std::string capped = original;
  const std::string cap_line = "        maxAgents: 10\n";
  ASSERT_NE(capped.find(cap_line), std::string::npos);
  capped.replace(capped.find(cap_line), cap_line.size(), "        maxAgents: 7\n");
  auto max_agents = [&] {
    auto r = Http().Get("/api/v1/clouds");
    if (!r || r->status != 200) return -1;
    nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    return j.is_object() ? j["clouds"][0]["max_agents"].get<int>() : -1;
  };
  ASSERT_EQ(max_agents(), 10);
  std::ofstream(config) << capped;
  kill(pid_, SIGHUP);
  for (int i = 0; i < 100 && max_agents() != 7; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(max_agents(), 7);

  std::ofstream(config) << original << "daemon: [this is not a mapping\n";
  const std::string fresh = "crash-test-fresh-token-9876543210abc";
  std::ofstream(dir_ / "tokens") << "admin rotated " << fresh << "\n";
  kill(pid_, SIGHUP);
  int status = 0;
  for (int i = 0; i < 100; ++i) {
    auto r = Http().Get("/api/v1/clouds");
    status = r ? r->status : 0;
    if (status == 401) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(status, 401) << "the revoked token still works";
  httplib::Client with_fresh("127.0.0.1", port_);
  with_fresh.set_bearer_token_auth(fresh);
  auto r = with_fresh.Get("/api/v1/clouds");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // the tokens are swapped before the configuration is read: its refusal is logged a moment later
  std::string logged;
  for (int i = 0; i < 100 && logged.find("reload refused") == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(50ms);
    std::stringstream text;
    text << std::ifstream(log_).rdbuf();
    logged = text.str();
  }
  EXPECT_NE(logged.find("reload refused"), std::string::npos) << logged;
  EXPECT_EQ(logged.find(fresh), std::string::npos) << "a token was logged";
  kill(pid_, SIGTERM);
  int exit_status = 0;
  waitpid(pid_, &exit_status, 0);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0);
}

}  // namespace
}  // namespace slurmfleet
