// ProvisionerIntegrationTest: the fixture of the Jenkins agents' end-to-end tests. It starts the
// stand-in Jenkins (tests/jenkins/standin/) and the daemon's provisioner and engines on their own
// threads, as `slurmfleet serve` runs them, against the real Slurm testbed; the agent of every job
// is the stand-in agent, copied into the testbed's rootfs. TearDown cancels whatever a failed test
// left in Slurm. Needs the running testbed.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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

using namespace std::chrono_literals;

inline std::string UniqueInstance() {
  std::mt19937_64 rng{std::random_device{}()};
  return "pv" + std::to_string(rng() % 1000000000);
}

class ProvisionerIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    slurm::Testbed tb;
    if (tb.Missing().empty()) standin::InstallStandinAgent(tb.root);
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
    for (auto [from, to] : {std::pair<std::string, std::string>{"{URL}", testbed_.url},
                            {"{DIR}", standin::kStandinAgentDir}}) {
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
    t.connections_ahead = EngineOptions{}.submit_concurrency;  // as serve holds them
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

  // The agents once the first one has failed, or when `limit` has passed (the caller checks).
  std::vector<Agent> AgentsOnceTheFirstFailed(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<Agent> agents = Agents();
    while ((agents.empty() || agents[0].phase != AgentPhase::kFailed) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(300ms);
      agents = Agents();
    }
    return agents;
  }

  // A `java` in the testbed whose -version says Java 11 (bash: the stand-in image has no
  // /bin/sh); its path, which the caller removes.
  std::string OldJava() {
    const std::string java = "/tmp/slurmfleet-old-java-" + instance_;
    std::ofstream(testbed_.root + java)
        << "#!/bin/bash\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n";
    std::filesystem::permissions(testbed_.root + java, std::filesystem::perms(0755));
    return java;
  }

  // What the failed agent's job wrote to its output file, which its outcome must name.
  std::string FailedJobOutput(const Agent& agent) {
    EXPECT_EQ(agent.phase, AgentPhase::kFailed) << AllEvents();
    if (!agent.job_id) {
      ADD_FAILURE() << "no Slurm job: " << AllEvents();
      return "";
    }
    const std::string output = "/tmp/jenkins/slurm-" + std::to_string(*agent.job_id) + ".out";
    EXPECT_NE(agent.outcome.find("ended before the agent connected"), std::string::npos)
        << agent.outcome;
    EXPECT_NE(agent.outcome.find("the script's output is in " + output), std::string::npos)
        << agent.outcome;
    std::ifstream in(testbed_.root + output);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

}  // namespace slurmfleet::fleet
