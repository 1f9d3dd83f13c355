// Jenkins agents end to end: the provisioner and the engine, through HTTP, against the stand-in
// Jenkins (tests/jenkins/standin/) and the real Slurm testbed. The agent of every job is the
// stand-in agent (standin-java, copied into the testbed's rootfs and configured as javaPath), so
// each build here really went: queue item -> node -> Slurm job -> agent connected over /wsagents/
// -> build -> node deleted -> job ended. Needs the running testbed.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "auth/minting_token_source.h"
#include "config/config.h"
#include "fleet/job_tag.h"
#include "fleet/provisioner.h"
#include "jenkins/http_client.h"
#include "jenkins/standin/jenkins_standin.h"
#include "jenkins/standin/standin_agent_install.h"
#include "slurm/testbed_env.h"

namespace slurmfleet::fleet {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using standin::InstallStandinAgent;
constexpr const char* kStandinDir = standin::kStandinAgentDir;

std::string UniqueInstance() {
  std::mt19937_64 rng{std::random_device{}()};
  return "pv" + std::to_string(rng() % 1000000000);
}

class ProvisionerIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    slurm::Testbed tb;
    if (tb.Missing().empty()) InstallStandinAgent(tb.root);
  }

  void SetUp() override { ASSERT_EQ(testbed_.Missing(), ""); }

  void TearDown() override {
    Stop();
    if (!client_) return;
    // Whatever a failed test left: nothing of this instance may stay in Slurm.
    for (const slurm::JobInfo& j : LiveTaggedJobs()) (void)client_->Cancel({j.job_id, j.sluid});
  }

  // Starts the stand-in Jenkins, then the daemon's parts for `clouds_yaml` (the body of
  // jenkins.clouds, with {URL} for slurmrestd's and {DIR} for the stand-in agent's directory).
  void Start(const std::string& clouds_yaml, bool administer = true) {
    standin::JenkinsStandin::Options so;
    so.administer = administer;
    jenkins_ = standin::JenkinsStandin::Start(so);
    ASSERT_NE(jenkins_, nullptr);
    const std::string token_file = ::testing::TempDir() + "/" + instance_ + ".token";
    std::ofstream(token_file) << jenkins_->api_token() << "\n";

    std::string yaml = "jenkins:\n  url: " + jenkins_->url() +
                       "\n  credentials: {user: admin, apiTokenFile: " + token_file +
                       "}\n  clouds:\n" + clouds_yaml;
    for (auto [from, to] :
         {std::pair<std::string, std::string>{"{URL}", testbed_.url}, {"{DIR}", kStandinDir}}) {
      for (size_t at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at)) {
        yaml.replace(at, from.size(), to);
      }
    }
    config::LoadResult loaded = config::LoadConfigText(yaml, "test.yaml", {});
    ASSERT_TRUE(loaded.ok()) << config::FormatDiagnostic(loaded.diagnostics.front()) << "\n"
                             << yaml;
    config_ = loaded.config;

    slurm::TransportOptions t;
    t.base_url = testbed_.url;
    auto transport = slurm::CurlTransport::Create(t);
    ASSERT_TRUE(transport);
    transport_ = std::move(*transport);
    tokens_ = std::make_unique<auth::MintingTokenSource>(testbed_.jwt_key, testbed_.user, clock_);
    slurm::RestClientOptions ro;
    ro.api_version = testbed_.api_version;
    auto client = slurm::RestClient::Connect(*transport_, *tokens_, ro);
    ASSERT_TRUE(client) << client.error().ToString();
    client_ = std::move(*client);

    jenkins::HttpClientOptions jo;
    jo.base_url = jenkins_->url();
    jo.user = "admin";
    jo.api_token_file = token_file;
    auto jc = jenkins::HttpClient::Create(jo);
    ASSERT_TRUE(jc) << jc.error().ToString();
    jenkins_client_ = std::move(*jc);

    auto store = store::Store::Open(::testing::TempDir() + "/" + instance_ + ".db", clock_);
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
    StartDaemon();
  }

  // The daemon's loops, on their own threads, as `slurmfleet serve` runs them.
  void StartDaemon() {
    std::vector<ProvisionerCloud> targets;
    for (const config::Cloud& c : config_.clouds) {
      EngineOptions o;
      o.cloud = c.name;
      o.instance = instance_;
      o.fast_interval = 300ms;
      o.slow_interval = 2s;
      o.orphan_grace = 20s;
      auto engine = Engine::Create(*store_, *client_, clock_, o);
      ASSERT_TRUE(engine) << engine.error().ToString();
      engines_.push_back(std::move(*engine));
      targets.push_back({c.name, engines_.back().get(), client_.get()});
    }
    auto templates = TemplateRegistry::Create(*store_, clock_, config_);
    ASSERT_TRUE(templates) << templates.error().ToString();
    templates_ = std::move(*templates);
    ProvisionerOptions po;
    po.instance = instance_;
    po.interval = 300ms;
    po.unused_agent_limit = 20s;
    auto p = Provisioner::Create(*jenkins_client_, *templates_, *store_, clock_, targets, po);
    ASSERT_TRUE(p) << p.error().ToString();
    provisioner_ = std::move(*p);
    for (auto& e : engines_) threads_.emplace_back([&e] { e->Run(); });
    threads_.emplace_back([this] { provisioner_->Run(); });
  }

  void Stop() {
    if (provisioner_) provisioner_->Stop();
    for (auto& e : engines_) e->Stop();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    provisioner_.reset();
    engines_.clear();
    templates_.reset();
  }

  std::vector<slurm::JobInfo> LiveTaggedJobs() {
    std::vector<slurm::JobInfo> out;
    auto jobs = client_->JobsChangedSince(std::nullopt);
    EXPECT_TRUE(jobs) << jobs.error().ToString();
    if (!jobs) return out;
    for (const slurm::JobInfo& j : jobs->jobs) {
      auto tag = ParseTag(j.comment);
      bool live =
          j.state.base == slurm::BaseState::kPending || j.state.base == slurm::BaseState::kRunning;
      if (tag && tag->instance == instance_ && live) out.push_back(j);
    }
    return out;
  }

  std::vector<Agent> Agents() {
    std::vector<Agent> out;
    auto records = store_->ListRecords("agent", false);
    EXPECT_TRUE(records);
    for (const auto& r : *records) out.push_back(*FromRecord(r));
    return out;
  }

  std::string AllEvents() {
    std::string out;
    auto events = store_->Events("", 0, 0);
    if (!events) return events.error().ToString();
    for (const store::Event& e : *events) {
      out += e.key + " " + e.type + ": " + e.message + "\n";
    }
    return out;
  }

  // Nothing left behind: no node in Jenkins, no live job of ours in Slurm, every agent ended.
  void ExpectNothingLeft(std::chrono::seconds limit = 60s) {
    EXPECT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.nodes.empty(); }, limit))
        << AllEvents();
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!LiveTaggedJobs().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(500ms);
    }
    EXPECT_TRUE(LiveTaggedJobs().empty()) << AllEvents();
    for (const Agent& a : Agents()) {
      EXPECT_TRUE(IsFinal(a.phase) || a.phase == AgentPhase::kTerminating)
          << a.name << " " << AgentPhaseName(a.phase);
    }
  }

  std::string Template(const std::string& name, const std::string& label,
                       const std::string& extra = "") {
    return "          - name: " + name + "\n            label: " + label +
           "\n            workingDirectory: /tmp/jenkins\n            memoryPerNode: 10\n"
           "            agentLaunch: {javaPath: {DIR}/java, jarPath: {DIR}/agent.jar}\n" +
           extra;
  }

  std::string Cloud(const std::string& name, int max_agents, const std::string& templates,
                    const std::string& extra = "") {
    return "    - slurm:\n        name: " + name +
           "\n        slurmRestApiUrl: {URL}\n        apiVersion: " + testbed_.api_version +
           "\n        credentials: {user: " + testbed_.user + ", jwtKeyFile: " + testbed_.jwt_key +
           "}\n        maxAgents: " + std::to_string(max_agents) + "\n" + extra +
           "        jobTemplates:\n" + templates;
  }

  slurm::Testbed testbed_;
  SystemClock clock_;
  std::string instance_ = UniqueInstance();
  config::Config config_;
  std::unique_ptr<standin::JenkinsStandin> jenkins_;
  std::unique_ptr<slurm::Transport> transport_;
  std::unique_ptr<auth::TokenSource> tokens_;
  std::unique_ptr<slurm::RestClient> client_;
  std::unique_ptr<jenkins::HttpClient> jenkins_client_;
  std::unique_ptr<store::Store> store_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::unique_ptr<TemplateRegistry> templates_;
  std::unique_ptr<Provisioner> provisioner_;
  std::vector<std::thread> threads_;
};

TEST_F(ProvisionerIntegrationTest, OneQueuedBuildRunsOnOneAgentThenEverythingIsGone) {
  Start(Cloud("tb", 4, Template("cpu", "linux")));
  jenkins_->EnqueueFreestyle("hello", "linux", 2s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 1; }, 90s))
      << AllEvents();
  auto stats = jenkins_->Stats();
  EXPECT_EQ(stats.completed_builds[0].result, "SUCCESS");
  EXPECT_TRUE(stats.completed_builds[0].built_on.starts_with("tb-cpu-"));
  EXPECT_EQ(stats.nodes_created, 1u);
  ExpectNothingLeft();
  // the record turns done at the passes after the job is seen ended, which may be just after now
  std::vector<Agent> agents = Agents();
  for (int i = 0; i < 100 && agents.size() == 1 && !IsFinal(agents[0].phase); ++i) {
    std::this_thread::sleep_for(100ms);
    agents = Agents();
  }
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].phase, AgentPhase::kDone) << agents[0].outcome;
  EXPECT_EQ(agents[0].builds, 1);
  ASSERT_TRUE(agents[0].job_id.has_value());
  const std::string events = AllEvents();
  EXPECT_NE(events.find("Agent connected after"), std::string::npos) << events;
  EXPECT_NE(events.find("submitted: Submitted Slurm job " + std::to_string(*agents[0].job_id)),
            std::string::npos)
      << events;
}

TEST_F(ProvisionerIntegrationTest, TenBuildsWithInstanceCapThreeNeverExceedThree) {
  Start(Cloud("tb", 10, Template("cpu", "linux", "            instanceCap: 3\n")));
  std::atomic<bool> sampling{true};
  std::atomic<size_t> max_live_jobs{0};
  std::thread sampler([&] {
    while (sampling) {
      max_live_jobs = std::max(max_live_jobs.load(), LiveTaggedJobs().size());
      std::this_thread::sleep_for(300ms);
    }
  });
  for (int i = 0; i < 10; ++i) jenkins_->EnqueueFreestyle("build", "linux", 2s);
  bool done =
      jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 10; }, 300s);
  sampling = false;
  sampler.join();
  ASSERT_TRUE(done) << AllEvents();
  auto stats = jenkins_->Stats();
  EXPECT_LE(stats.max_nodes_seen, 3u);
  EXPECT_LE(max_live_jobs.load(), 3u);
  for (const auto& b : stats.completed_builds) EXPECT_EQ(b.result, "SUCCESS") << b.job;
  EXPECT_EQ(stats.nodes_created, 10u) << "idleMinutes 0: one build per agent";
  ExpectNothingLeft();
}

TEST_F(ProvisionerIntegrationTest, AJobFailingAtStartFailsFastWithItsReason) {
  // The working directory does not exist on the nodes: Slurm cannot start the batch script.
  std::string bad = Template("badcwd", "broken");
  bad.replace(bad.find("/tmp/jenkins"), 12, "/nonexistent/jenkins");
  Start(Cloud("tb", 4, bad));
  int64_t item = jenkins_->EnqueueFreestyle("doomed", "broken", 1s);
  // the fail-fast path, not agentTimeoutMinutes (5 min) running out
  auto deadline = std::chrono::steady_clock::now() + 45s;
  std::vector<Agent> agents;
  while (std::chrono::steady_clock::now() < deadline) {
    agents = Agents();
    if (!agents.empty() && agents[0].phase == AgentPhase::kFailed) break;
    std::this_thread::sleep_for(300ms);
  }
  ASSERT_FALSE(agents.empty());
  ASSERT_EQ(agents[0].phase, AgentPhase::kFailed) << AllEvents();
  EXPECT_NE(agents[0].outcome.find("ended before the agent connected"), std::string::npos)
      << agents[0].outcome;
  EXPECT_NE(agents[0].outcome.find("FAILED"), std::string::npos) << agents[0].outcome;
  jenkins_->CancelItem(item);
  ExpectNothingLeft();
}

TEST_F(ProvisionerIntegrationTest, AnAgentThatNeverConnectsTimesOutAndLeavesNothing) {
  // The job runs but its agent never dials in.
  Start(Cloud("tb", 4,
              Template("silent", "silent",
                       "            agentTimeoutMinutes: 1\n"
                       "            customScript: |\n"
                       "              #!/bin/bash\n"
                       "              sleep 600\n")));
  int64_t item = jenkins_->EnqueueFreestyle("waits", "silent", 1s);
  std::vector<Agent> agents;
  auto deadline = std::chrono::steady_clock::now() + 100s;
  while (std::chrono::steady_clock::now() < deadline) {
    agents = Agents();
    if (!agents.empty() && agents[0].phase == AgentPhase::kFailed) break;
    std::this_thread::sleep_for(500ms);
  }
  ASSERT_FALSE(agents.empty());
  ASSERT_EQ(agents[0].phase, AgentPhase::kFailed) << AllEvents();
  EXPECT_NE(agents[0].outcome.find("Timeout waiting for agent to connect after 1 min"),
            std::string::npos)
      << agents[0].outcome;
  jenkins_->CancelItem(item);
  ExpectNothingLeft();
}

TEST_F(ProvisionerIntegrationTest, FolderRestrictionAndFallbackToASecondCloud) {
  Start(Cloud("team", 4, Template("gpu", "gpu"), "        authorizedFolders: [team-a]\n") +
        Cloud("first", 4, Template("fb", "fallback", "            instanceCap: 1\n")) +
        Cloud("second", 4, Template("fb2", "fallback")));
  // Outside the cloud's folders: skipped with an event, and no agent is started for it.
  int64_t outsider = jenkins_->EnqueueFreestyle("team-b/train", "gpu", 1s);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (AllEvents().find("skipped") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
  }
  const std::string events = AllEvents();
  EXPECT_NE(events.find("serves only the folders team-a; the job is in folder team-b"),
            std::string::npos)
      << events;
  std::this_thread::sleep_for(2s);  // several passes
  EXPECT_EQ(jenkins_->Stats().nodes_created, 0u);
  ASSERT_TRUE(jenkins_->CancelItem(outsider));

  jenkins_->EnqueueFreestyle("team-a/sub/train", "gpu", 1s);
  jenkins_->EnqueueFreestyle("fb-1", "fallback", 4s);
  jenkins_->EnqueueFreestyle("fb-2", "fallback", 4s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 3; }, 120s))
      << AllEvents();
  std::set<std::string> built_on;
  for (const auto& b : jenkins_->Stats().completed_builds) {
    built_on.insert(b.job + "@" + b.built_on.substr(0, b.built_on.find('-')));
  }
  EXPECT_TRUE(built_on.contains("team-a/sub/train@team")) << ::testing::PrintToString(built_on);
  EXPECT_TRUE(built_on.contains("fb-1@first") || built_on.contains("fb-2@first"))
      << ::testing::PrintToString(built_on);
  EXPECT_TRUE(built_on.contains("fb-1@second") || built_on.contains("fb-2@second"))
      << ::testing::PrintToString(built_on);
  ExpectNothingLeft();
}

TEST_F(ProvisionerIntegrationTest, PipelineLabelsWithoutAdministerComeFromWhy) {
  Start(Cloud("tb", 4, Template("cpu", "linux")), /*administer=*/false);
  jenkins_->EnqueuePipeline("pipe", "linux", 2s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 1; }, 90s))
      << AllEvents();
  EXPECT_EQ(provisioner_->Report().label_mode, "expression");
  ExpectNothingLeft();
}

TEST_F(ProvisionerIntegrationTest, RestartedMidFlightLeaksNothing) {
  Start(Cloud("tb", 6, Template("cpu", "linux")));
  for (int i = 0; i < 4; ++i) jenkins_->EnqueueFreestyle("r", "linux", 3s);
  // stop the daemon's loops while agents are between node creation and connection
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.nodes_created >= 2; }, 30s));
  Stop();
  std::this_thread::sleep_for(2s);
  StartDaemon();
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 4; }, 180s))
      << AllEvents();
  ExpectNothingLeft();
}

TEST_F(ProvisionerIntegrationTest, AJenkinsRestartIsNoticedAndLeavesNothingBehind) {
  Start(Cloud("tb", 4, Template("cpu", "linux")));
  jenkins_->EnqueueFreestyle("long", "linux", 30s);
  jenkins_->EnqueueFreestyle("long", "linux", 30s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.running_builds.size() == 2; }, 60s))
      << AllEvents();
  jenkins_->Restart();  // new session; agents dropped; the running freestyle builds are lost
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (AllEvents().find("Jenkins restarted") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_NE(AllEvents().find("Jenkins restarted"), std::string::npos) << AllEvents();
  // The agents reconnect (remoting retries) and their builds are gone: one-shot agents end, the
  // one whose build came and went between two polls once no build came for it in time.
  ExpectNothingLeft(90s);
  for (const Agent& a : Agents()) EXPECT_LE(a.builds, 1) << a.name;
}

}  // namespace
}  // namespace slurmfleet::fleet
