// The provisioner's reconcile contract against a fake Jenkins (fake_jenkins_client.h), the real
// engine over a fake Slurm, a real in-memory store and a clock that moves only when told to. The
// same scenarios run end to end, through HTTP, against the stand-in Jenkins and the real Slurm
// testbed in provisioner_integration_test.cc.
#include "fleet/provisioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

#include "base/fake_clock.h"
#include "fleet/fake_jenkins_client.h"
#include "fleet/fake_slurm_client.h"
#include "jenkins/forwarding_client.h"

namespace slurmfleet::fleet {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kConfig = R"(
jenkins:
  url: http://jenkins.test/
  credentials: {user: admin, apiTokenFile: /etc/slurmfleet/jenkins.token}
  clouds:
    - slurm:
        name: c1
        slurmRestApiUrl: http://127.0.0.1:6820
        apiVersion: v0.0.45
        credentials: {user: ci, jwtFile: /etc/slurmfleet/jwt}
        maxAgents: 5
        jobTemplates:
          - name: cpu
            label: linux cpu
            instanceCap: 3
            workingDirectory: /tmp/jenkins
            agentLaunch: {jarPath: /opt/agent.jar}
          - name: reuse
            label: reusable
            idleMinutes: 2
            workingDirectory: /tmp/jenkins
            agentLaunch: {jarPath: /opt/agent.jar}
    - slurm:
        name: c2
        slurmRestApiUrl: http://127.0.0.1:6821
        apiVersion: v0.0.45
        credentials: {user: ci, jwtFile: /etc/slurmfleet/jwt}
        maxAgents: 2
        authorizedFolders: [team-a]
        jobTemplates:
          - name: gpu
            label: gpu
            workingDirectory: /tmp/jenkins
            agentLaunch: {jarPath: /opt/agent.jar}
)";

// Hands the provisioner's calls to the fake one at a time (the fake is not thread-safe), but once
// armed, lets the calls of each named kind wait for each other: each waits until `together` of its
// kind are in flight, or 20 s. Made one after another, they never are.
class SideBySideJenkins final : public jenkins::ForwardingClient {
 public:
  explicit SideBySideJenkins(FakeJenkinsClient& inner) : ForwardingClient(inner) {}

  // Also starts the log of calls afresh.
  void Arm(const std::set<std::string>& kinds, int together) {
    {
      std::lock_guard lock(call_mu_);
      calls_.clear();
    }
    std::lock_guard lock(wait_mu_);
    kinds_.clear();
    for (const std::string& kind : kinds) kinds_[kind] = {};
    together_ = together;
  }
  // The most calls of `kind` that were in flight at once since Arm.
  int most_in_flight(const std::string& kind) const {
    std::lock_guard lock(wait_mu_);
    auto it = kinds_.find(kind);
    return it == kinds_.end() ? 0 : it->second.most_in_flight;
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(call_mu_);
    return calls_;
  }

 private:
  struct Kind {
    int in_flight = 0;
    int most_in_flight = 0;
    bool met = false;
  };

  void Around(std::string_view name, const std::function<void()>& call) override {
    {
      std::unique_lock lock(wait_mu_);
      if (auto it = kinds_.find(std::string(name)); it != kinds_.end()) {
        Kind& kind = it->second;
        kind.most_in_flight = std::max(kind.most_in_flight, ++kind.in_flight);
        if (kind.in_flight >= together_) kind.met = true;
        met_cv_.notify_all();
        met_cv_.wait_for(lock, 20s, [&] { return kind.met; });
        --kind.in_flight;
      }
    }
    std::lock_guard lock(call_mu_);
    calls_.emplace_back(name);
    call();
  }

  std::mutex call_mu_;
  std::vector<std::string> calls_;  // since Arm, each call's kind in the order it reached the fake
  mutable std::mutex wait_mu_;
  std::condition_variable met_cv_;
  std::map<std::string, Kind> kinds_;  // guarded by wait_mu_
  int together_ = 0;
};

class ProvisionerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(":memory:", clock_);
    ASSERT_TRUE(s) << s.error().ToString();
    store_ = std::move(*s);
    config::LoadResult loaded = config::LoadConfigText(kConfig, "test.yaml", {});
    ASSERT_TRUE(loaded.ok()) << config::FormatDiagnostic(loaded.diagnostics.front());
    config_ = loaded.config;
    for (const char* cloud : {"c1", "c2"}) {
      EngineOptions o;
      o.cloud = cloud;
      o.instance = "test";
      o.submit_concurrency = 1;  // the fake Slurm is not thread-safe
      o.start_details_delay = 0s;
      FakeSlurmClient& slurm = std::string(cloud) == "c1" ? slurm1_ : slurm2_;
      auto e = Engine::Create(*store_, slurm, clock_, o);
      ASSERT_TRUE(e) << e.error().ToString();
      engines_.push_back(std::move(*e));
    }
    auto t = TemplateRegistry::Create(*store_, clock_, config_);
    ASSERT_TRUE(t) << t.error().ToString();
    templates_ = std::move(*t);
    provisioner_ = MakeProvisioner();
  }

  // `with_c1` false: as after a restart with c1 removed from the configuration.
  // `jenkins` and `concurrency`: a client that makes the fake safe for calls side by side.
  std::unique_ptr<Provisioner> MakeProvisioner(bool with_c1 = true,
                                               jenkins::Client* jenkins = nullptr,
                                               size_t concurrency = 1) {
    ProvisionerOptions o;
    o.instance = "test";
    o.debug_log = [this](std::string_view line) { debug_lines_.emplace_back(line); };
    o.jenkins_concurrency = concurrency;  // 1: the fake Jenkins is not thread-safe
    o.unused_agent_limit = unused_agent_limit_;
    std::vector<ProvisionerCloud> clouds = {{"c2", engines_[1].get(), &slurm2_}};
    if (with_c1) clouds.insert(clouds.begin(), {"c1", engines_[0].get(), &slurm1_});
    auto p = Provisioner::Create(jenkins ? *jenkins : jenkins_, *templates_, *store_, clock_,
                                 std::move(clouds), o);
    EXPECT_TRUE(p) << p.error().ToString();
    return std::move(*p);
  }

  // One pass of everything: the provisioner decides, the engines submit and track.
  void Pass() {
    provisioner_->Tick();
    for (auto& e : engines_) {
      e->Tick();
      e->Tick();
    }
  }
  // A pass in which our `agent` (connecting first when `connect`) takes its item right after the
  // pass's first look at the nodes, while two new items arrive: the look at the queue no longer
  // shows the taken item. Both new items must get an agent in that pass, counted from a second
  // look at the nodes taken with the queue.
  void PassInWhichTheAgentTakesItsItemAfterTheFirstLook(const std::string& agent, bool connect) {
    jenkins_.after_next_computers = [this, agent, connect] {
      if (connect) jenkins_.Connect(agent);
      jenkins_.StartBuild(agent, "http://jenkins.test/job/j/1/");
      jenkins_.Enqueue("linux");
      jenkins_.Enqueue("linux");
    };
    const int computers_before = jenkins_.computers_calls;
    const int created_before = jenkins_.created;
    Pass();
    EXPECT_EQ(jenkins_.computers_calls - computers_before, 2)
        << "the nodes are asked again with the queue while an agent of ours looked free";
    EXPECT_EQ(jenkins_.created - created_before, 2)
        << "both new items get an agent in the same pass";
  }

  void Advance(std::chrono::seconds d) {
    clock_.Advance(d);
    slurm1_.now += d;
    slurm2_.now += d;
  }

  std::vector<Agent> Agents(bool all = true) {
    std::vector<Agent> out;
    auto records = store_->ListRecords("agent", !all);
    EXPECT_TRUE(records);
    for (const auto& r : *records) out.push_back(*FromRecord(r));
    return out;
  }

  // Two passes for the two queued items: their agents are started, then connected (their Slurm
  // jobs running). The agents' names.
  std::vector<std::string> ConnectAgentsForTwoItems() {
    Pass();
    EXPECT_EQ(jenkins_.nodes.size(), 2u);
    for (const auto& [id, job] : slurm1_.jobs()) slurm1_.SetState(id, {"RUNNING"});
    std::vector<std::string> names;
    for (const auto& [name, node] : jenkins_.nodes) names.push_back(name);
    for (const std::string& name : names) jenkins_.Connect(name);
    Pass();
    return names;
  }
  // Two agents connected for two items, whose builds then start, unseen yet: their names.
  std::vector<std::string> StartTwoBuilds() {
    jenkins_.Enqueue("linux");
    jenkins_.Enqueue("linux");
    const std::vector<std::string> names = ConnectAgentsForTwoItems();
    jenkins_.queue.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      jenkins_.StartBuild(names[i], "http://jenkins.test/job/j/" + std::to_string(i + 1) + "/");
    }
    return names;
  }

  // Two agents connected for two items, whose builds then both run and end between two passes,
  // found only through the items: their names.
  std::vector<std::string> RunTwoBuildsBetweenTwoPasses() {
    const int64_t first = jenkins_.Enqueue("linux");
    const int64_t second = jenkins_.Enqueue("linux");
    const std::vector<std::string> names = ConnectAgentsForTwoItems();
    jenkins_.queue.clear();
    const std::string runs[] = {"http://jenkins.test/job/j/1/", "http://jenkins.test/job/j/2/"};
    jenkins_.fates[first] = {true, false, runs[0]};
    jenkins_.fates[second] = {true, false, runs[1]};
    jenkins_.runs[runs[0]] = {false, "SUCCESS", names[0]};
    jenkins_.runs[runs[1]] = {false, "SUCCESS", names[1]};
    return names;
  }

  // A pass that starts the agent for the one queued item, which then connects (its Slurm job
  // running); returns the agent's name.
  std::string ConnectFirstAgent() {
    Pass();
    EXPECT_EQ(jenkins_.nodes.size(), 1u);
    const std::string name = jenkins_.nodes.begin()->first;
    slurm1_.SetState(slurm1_.jobs().begin()->first, {"RUNNING"});
    jenkins_.Connect(name);
    return name;
  }

  // One queued build, started on a connected one-build agent; returns the agent's name.
  std::string StartOneBuild() {
    jenkins_.Enqueue("linux");
    const std::string name = ConnectFirstAgent();
    Pass();
    jenkins_.StartBuild(name, "http://jenkins.test/job/j/1/");
    Pass();
    return name;
  }

  // A node that carries our marker, which no agent of ours owns.
  void CreateStrayNode(const std::string& name) {
    jenkins::NodeSpec stray{name,
                            "slurmfleet:test cloud c1, template cpu",
                            "/tmp",
                            "linux",
                            jenkins::NodeMode::kExclusive,
                            1};
    ASSERT_TRUE(jenkins_.CreateNode(stray));
  }

  // Changes the one stored agent as a daemon killed between two of its writes leaves it.
  void RewriteStoredAgent(const std::function<void(Agent&)>& change) {
    auto records = store_->ListRecords("agent", false);
    ASSERT_TRUE(records);
    ASSERT_EQ(records->size(), 1u);
    Agent agent = *FromRecord(records->front());
    change(agent);
    store::Record record = ToRecord(agent, records->front());
    ASSERT_TRUE(store_->PutRecord(record));
  }

  std::string Events(const std::string& key) {
    std::string out;
    auto events = store_->Events(key, 0, 0);
    for (const auto& e : *events) out += e.type + ": " + e.message + "\n";
    return out;
  }

  int LiveJobs(FakeSlurmClient& slurm) {
    int n = 0;
    for (const auto& [id, j] : slurm.jobs()) {
      n += j.state.base == slurm::BaseState::kPending || j.state.base == slurm::BaseState::kRunning;
    }
    return n;
  }

  FakeClock clock_{std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000))};
  FakeJenkinsClient jenkins_;
  FakeSlurmClient slurm1_, slurm2_;
  config::Config config_;
  std::unique_ptr<store::Store> store_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::unique_ptr<TemplateRegistry> templates_;
  std::unique_ptr<Provisioner> provisioner_;
  std::vector<std::string> debug_lines_;
  std::chrono::seconds unused_agent_limit_ = ProvisionerOptions().unused_agent_limit;
};

// CONTRACT.md 8: the agent's Java must be as new as the controller asks (17; 21 from 2.545).
TEST_F(ProvisionerTest, TheAgentScriptChecksForTheJavaTheControllerNeeds) {
  jenkins_.Enqueue("linux");
  Pass();
  ASSERT_EQ(slurm1_.jobs().size(), 1u);
  EXPECT_NE(slurm1_.request_of(slurm1_.jobs().begin()->first)
                .script.find("the Jenkins agent needs Java 17 or newer"),
            std::string::npos);

  jenkins_.version = "2.545";
  jenkins_.Enqueue("linux");
  Pass();
  ASSERT_EQ(slurm1_.jobs().size(), 2u);
  EXPECT_NE(slurm1_.request_of(slurm1_.jobs().rbegin()->first)
                .script.find("the Jenkins agent needs Java 21 or newer"),
            std::string::npos);
}

TEST_F(ProvisionerTest, OneBuildOneNodeOneJobThenNothingLeft) {
  jenkins_.Enqueue("linux");
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  const std::string name = jenkins_.nodes.begin()->first;
  EXPECT_TRUE(name.starts_with("c1-cpu-"));
  const jenkins::NodeSpec& spec = jenkins_.specs.at(name);
  EXPECT_EQ(spec.labels, "linux cpu");
  EXPECT_EQ(spec.mode, jenkins::NodeMode::kExclusive);
  EXPECT_EQ(spec.num_executors, 1);
  EXPECT_EQ(spec.remote_fs, "/tmp/jenkins/agents/" + name);
  EXPECT_TRUE(spec.description.starts_with("slurmfleet:test"));
  ASSERT_EQ(slurm1_.jobs().size(), 1u);
  const slurm::JobRequest& request = slurm1_.request_of(slurm1_.jobs().begin()->first);
  EXPECT_EQ(request.name, name);
  bool has_secret = false;
  for (const slurm::EnvVar& v : request.environment) {
    if (v.name == "JENKINS_SECRET") has_secret = v.secret && v.value == std::string(64, 'a');
    if (v.name == "JENKINS_URL") {
      EXPECT_EQ(v.value, "http://jenkins.test/");
    }
  }
  EXPECT_TRUE(has_secret);

  Pass();  // nothing new: the starting agent covers the item
  EXPECT_EQ(jenkins_.created, 1);
  EXPECT_EQ(jenkins_.nodes.at(name).description,
            "slurmfleet:test cloud c1, template cpu; Slurm job " +
                std::to_string(slurm1_.jobs().begin()->first))
      << "the node names its Slurm job in the Jenkins UI";

  const uint32_t job = slurm1_.jobs().begin()->first;
  slurm1_.SetState(job, {"RUNNING"});
  jenkins_.Connect(name);
  Pass();
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kOnline);
  EXPECT_NE(Events(name).find("Agent connected after"), std::string::npos) << Events(name);

  jenkins_.StartBuild(name, "http://jenkins.test/job/j/1/");
  Pass();
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << "drained while its build runs";
  EXPECT_EQ(LiveJobs(slurm1_), 1);

  jenkins_.EndBuild(name);
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  EXPECT_EQ(LiveJobs(slurm1_), 0);
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kTerminating) << "done once the job is seen ended";
  Pass();
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kDone);
  EXPECT_EQ(Agents()[0].builds, 1);
  EXPECT_NE(Events(name).find("node deleted and Slurm job " + std::to_string(job) +
                              " ended (CANCELLED): its one build finished"),
            std::string::npos)
      << Events(name);
}

TEST_F(ProvisionerTest, AnEndingAgentKeepsItsCapPlaceUntilItsJobIsSeenEnded) {
  for (int i = 0; i < 4; ++i) jenkins_.Enqueue("linux");
  for (int i = 0; i < 2; ++i) Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 3u);
  const std::string name = jenkins_.nodes.begin()->first;
  const uint32_t job = *Agents()[0].job_id;
  slurm1_.SetState(job, {"RUNNING"});
  jenkins_.Connect(name);
  Pass();
  jenkins_.StartBuild(name, "http://jenkins.test/job/j/1/");
  Pass();
  jenkins_.EndBuild(name);
  // Slurm takes the cancel, but the engine cannot see the job end yet
  slurm1_.unavailable_lists = 1000;
  for (int i = 0; i < 3; ++i) Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  EXPECT_EQ(slurm1_.jobs().at(job).state.base, slurm::BaseState::kCancelled);
  EXPECT_EQ(jenkins_.nodes.size(), 2u) << "the 4th item waits: the ended agent still counts";
  EXPECT_EQ(jenkins_.created, 3);
  slurm1_.unavailable_lists = 0;
  for (int i = 0; i < 2; ++i) Pass();
  EXPECT_EQ(jenkins_.created, 4) << "its job seen ended, the cap place is free";
  EXPECT_EQ(jenkins_.max_nodes, 3);
}

TEST_F(ProvisionerTest, InstanceCapHoldsWhenManyItemsArriveTogether) {
  for (int i = 0; i < 10; ++i) jenkins_.Enqueue("linux");
  for (int i = 0; i < 3; ++i) Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 3u);
  EXPECT_EQ(jenkins_.max_nodes, 3);
  EXPECT_EQ(slurm1_.jobs().size(), 3u);
  EXPECT_NE(Events("queue-4").find("instanceCap"), std::string::npos) << Events("queue-4");
}

TEST_F(ProvisionerTest, AnAgentThatNeverConnectsTimesOutAndLeavesNothing) {
  jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  Advance(61s);
  Pass();
  EXPECT_NE(Events(name).find("still PENDING after 61s"), std::string::npos) << Events(name);
  Advance(5min);
  Pass();
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  EXPECT_TRUE(jenkins_.nodes.empty()) << "the item still waits, but relaunching backs off";
  EXPECT_EQ(LiveJobs(slurm1_), 0);
  Agent a = Agents()[0];
  EXPECT_EQ(a.phase, AgentPhase::kFailed);
  EXPECT_NE(a.outcome.find("Timeout waiting for agent to connect after 5 min"), std::string::npos)
      << a.outcome;
  EXPECT_NE(a.outcome.find("state PENDING"), std::string::npos) << a.outcome;
}

TEST_F(ProvisionerTest, AJobThatCompletesBeforeConnectingSaysTheAgentExitedOnItsOwn) {
  jenkins_.Enqueue("linux");
  Pass();
  slurm1_.SetState(slurm1_.jobs().begin()->first, {"COMPLETED"});
  Pass();
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  Agent a = Agents()[0];
  EXPECT_EQ(a.phase, AgentPhase::kFailed);
  EXPECT_NE(a.outcome.find("ended before the agent connected: COMPLETED; the agent exited 0 on "
                           "its own, as remoting does when it rejects its arguments"),
            std::string::npos)
      << a.outcome;
}

// Jenkins failing the node's delete for a while must not keep a job that never ran an agent
// in Slurm's queue: it holds a place there (and a cap place here) for nothing.
TEST_F(ProvisionerTest, ATimedOutJobIsCancelledWhileJenkinsCannotDeleteItsNode) {
  jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  const uint32_t job = slurm1_.jobs().begin()->first;
  jenkins_.unavailable_delete = true;
  Advance(5min + 1s);
  Pass();
  Pass();
  EXPECT_TRUE(jenkins_.nodes.contains(name)) << "the delete keeps failing";
  EXPECT_EQ(slurm1_.jobs().at(job).state.base, slurm::BaseState::kCancelled);
  jenkins_.unavailable_delete = false;
  Pass();
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kFailed);
}

// A Jenkins outage must not keep jobs that never ran an agent in Slurm's queue past their
// timeout; the node goes once Jenkins answers again.
TEST_F(ProvisionerTest, AnAgentTimesOutAndItsJobIsCancelledWhileJenkinsIsDown) {
  jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  const uint32_t job = slurm1_.jobs().begin()->first;
  jenkins_.down = true;
  Advance(4min);
  Pass();
  EXPECT_EQ(slurm1_.jobs().at(job).state.base, slurm::BaseState::kPending) << "not timed out yet";
  Advance(1min + 1s);
  Pass();
  Pass();
  EXPECT_EQ(slurm1_.jobs().at(job).state.base, slurm::BaseState::kCancelled);
  EXPECT_NE(Events(name).find("Timeout waiting for agent to connect after 5 min (Slurm job " +
                              std::to_string(job)),
            std::string::npos)
      << Events(name);
  jenkins_.down = false;
  Pass();
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  Agent a = Agents()[0];
  EXPECT_EQ(a.phase, AgentPhase::kFailed);
  EXPECT_NE(a.outcome.find("Jenkins does not answer"), std::string::npos) << a.outcome;
}

TEST_F(ProvisionerTest, AJobSlurmRefusedSaysSoWithSlurmsWords) {
  slurm1_.reject_submits = 1;
  jenkins_.Enqueue("linux");
  for (int i = 0; i < 3; ++i) Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  Agent a = Agents()[0];
  EXPECT_EQ(a.phase, AgentPhase::kFailed);
  EXPECT_TRUE(a.outcome.starts_with("Launch failed: Slurm did not take the job: ")) << a.outcome;
  EXPECT_NE(a.outcome.find("Invalid partition name specified"), std::string::npos) << a.outcome;
  EXPECT_EQ(a.outcome.find("not yet submitted"), std::string::npos) << a.outcome;
}

// The warning counts the job's own time in Slurm's queue, from its submit: not the time the
// node's creation or failed submits took before it.
TEST_F(ProvisionerTest, ThePendingWarningCountsFromTheSubmit) {
  slurm1_.unavailable_submits = 1000;
  jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  Advance(50s);
  Pass();
  ASSERT_TRUE(slurm1_.jobs().empty());
  slurm1_.unavailable_submits = 0;
  for (int i = 0; i < 5 && slurm1_.jobs().empty(); ++i) {
    Advance(1s);
    Pass();
  }
  ASSERT_EQ(slurm1_.jobs().size(), 1u);
  Advance(30s);
  Pass();
  EXPECT_EQ(Events(name).find("still PENDING"), std::string::npos) << Events(name);
  Advance(31s);
  Pass();
  EXPECT_NE(Events(name).find("still PENDING after 6"), std::string::npos) << Events(name);
  EXPECT_NE(Events(name).find("(no reason given)"), std::string::npos)
      << "Slurm's None is no reason" << Events(name);
}

TEST_F(ProvisionerTest, AJobThatEndsBeforeConnectingFailsFast) {
  jenkins_.Enqueue("linux");
  Pass();
  slurm1_.SetState(slurm1_.jobs().begin()->first, {"FAILED"}, "NonZeroExitCode");
  Pass();
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  Agent a = Agents()[0];
  EXPECT_EQ(a.phase, AgentPhase::kFailed);
  EXPECT_NE(a.outcome.find("ended before the agent connected: FAILED"), std::string::npos)
      << a.outcome;
  // the item still waits: a new agent comes, but only after a back-off, not in a tight loop
  Advance(5s);
  Pass();
  EXPECT_EQ(jenkins_.created, 1);
  Advance(10s);
  Pass();
  EXPECT_EQ(jenkins_.created, 2);
}

TEST_F(ProvisionerTest, ANodeDeletedInJenkinsCancelsItsJob) {
  jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  jenkins_.nodes.erase(name);
  jenkins_.queue.clear();
  Pass();
  EXPECT_EQ(LiveJobs(slurm1_), 0);
  EXPECT_NE(Agents()[0].outcome.find("was deleted in Jenkins"), std::string::npos);
}

TEST_F(ProvisionerTest, AJobThatDiesWhileOnlineDeletesTheNode) {
  jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  const uint32_t job = slurm1_.jobs().begin()->first;
  slurm1_.SetState(job, {"RUNNING"});
  jenkins_.Connect(name);
  Pass();
  slurm1_.SetState(job, {"NODE_FAIL"});
  Pass();
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  EXPECT_EQ(jenkins_.nodes.size(), 1u) << "its item still waits: a new agent is on the way";
  EXPECT_NE(Events(name).find("ended while its agent was online"), std::string::npos)
      << Events(name);
}

// Jenkins keeps a Pipeline block's executor busy after its agent's channel dropped, until the
// node is removed: the daemon must not wait for that build to end.
TEST_F(ProvisionerTest, ADeadAgentsBuildThatJenkinsStillShowsRunningDoesNotKeepItsNode) {
  const std::string name = StartOneBuild();
  const uint32_t job = slurm1_.jobs().begin()->first;
  slurm1_.SetState(job, {"NODE_FAIL"});
  jenkins::Computer& node = jenkins_.nodes.at(name);
  node.absolute_remote_path.reset();  // the channel is gone, the executor still "busy"
  node.offline = true;
  ASSERT_TRUE(node.building());
  Pass();
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name)) << Events(name);
  EXPECT_EQ(LiveJobs(slurm1_), 0);
  EXPECT_NE(Events(name).find("ended while its agent was online"), std::string::npos)
      << Events(name);
}

TEST_F(ProvisionerTest, ADisconnectedAgentWithABuildShownRunningIsEndedAfterTheGrace) {
  const std::string name = StartOneBuild();
  jenkins::Computer& node = jenkins_.nodes.at(name);
  node.absolute_remote_path.reset();
  node.offline = true;
  Pass();
  EXPECT_TRUE(jenkins_.nodes.contains(name)) << "it may reconnect";
  clock_.Advance(std::chrono::minutes(10));
  Pass();
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name)) << Events(name);
  EXPECT_EQ(LiveJobs(slurm1_), 0);
}

TEST_F(ProvisionerTest, ARefusedDrainIsToldOnce) {
  jenkins_.refuse_drain = true;
  const std::string name = StartOneBuild();
  Pass();
  Pass();
  const std::string events = Events(name);
  const std::string refusal = "warn: Jenkins refused to mark the node offline";
  ASSERT_NE(events.find(refusal), std::string::npos) << events;
  EXPECT_EQ(events.find(refusal, events.find(refusal) + 1), std::string::npos) << events;
  EXPECT_NE(events.find("missing Agent/Disconnect"), std::string::npos) << events;
  EXPECT_NE(provisioner_->Report().last_error.find("Jenkins refused to mark"), std::string::npos);
}

TEST_F(ProvisionerTest, ARefusedNodeDeletionStillEndsTheSlurmJob) {
  jenkins_.refuse_delete = true;
  const std::string name = StartOneBuild();
  jenkins_.EndBuild(name);
  jenkins_.queue.clear();
  Pass();
  Pass();
  Pass();
  EXPECT_EQ(LiveJobs(slurm1_), 0) << Events(name);
  EXPECT_NE(Events(name).find("warn: Jenkins refused to delete node " + name), std::string::npos)
      << Events(name);
  ASSERT_EQ(Agents(true).size(), 1u);
  EXPECT_EQ(Agents(true)[0].phase, AgentPhase::kDone) << "its cap place is given back";
}

// CONTRACT.md 6: a build shorter than the time between two looks at the node is never seen on
// its executor; the item it came from tells, through the run's builtOn.
TEST_F(ProvisionerTest, AOneBuildAgentsBuildThatCameAndWentBetweenTwoPassesIsItsOneBuild) {
  const int64_t id = jenkins_.Enqueue("linux");
  const std::string name = ConnectFirstAgent();
  Pass();
  ASSERT_EQ(Agents()[0].phase, AgentPhase::kOnline);
  EXPECT_EQ(jenkins_.fate_calls, 0) << "nothing left the queue while it was unused";
  // the build ran and ended between two passes
  const std::string run = "http://jenkins.test/job/j/1/";
  std::erase_if(jenkins_.queue, [&](const jenkins::QueueItem& i) { return i.id == id; });
  jenkins_.fates[id] = {true, false, run};
  jenkins_.runs[run] = {false, "SUCCESS", name};
  Pass();
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << "drained: no second build";
  EXPECT_NE(Events(name).find("build started: " + run + " (and ended between two looks"),
            std::string::npos)
      << Events(name);
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  EXPECT_EQ(LiveJobs(slurm1_), 0);
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].builds, 1);
  EXPECT_EQ(Agents()[0].outcome, "its one build finished");
}

// Jenkins puts an item among the left ones a moment before it names the run it became: that
// look is not a cancellation, and the run is found at the next one.
TEST_F(ProvisionerTest, AnItemSeenLeftBeforeItsRunIsNamedIsAskedAgain) {
  const int64_t id = jenkins_.Enqueue("linux");
  const std::string name = ConnectFirstAgent();
  Pass();
  const std::string run = "http://jenkins.test/job/j/1/";
  std::erase_if(jenkins_.queue, [&](const jenkins::QueueItem& i) { return i.id == id; });
  jenkins_.fates[id] = {true, false, ""};
  Pass();
  EXPECT_FALSE(jenkins_.nodes.at(name).temporarily_offline);
  jenkins_.fates[id] = {true, false, run};
  jenkins_.runs[run] = {false, "SUCCESS", name};
  Pass();
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << "drained: no second build";
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].builds, 1) << Events(name);
}

TEST_F(ProvisionerTest, ACancelledItemIsLetGo) {
  const int64_t id = jenkins_.Enqueue("linux");
  ConnectFirstAgent();
  Pass();
  std::erase_if(jenkins_.queue, [&](const jenkins::QueueItem& i) { return i.id == id; });
  jenkins_.fates[id] = {true, true, ""};
  Pass();
  const int calls = jenkins_.fate_calls;
  EXPECT_GE(calls, 1);
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, calls) << "not asked again";
}

TEST_F(ProvisionerTest, AnItemThatLeftForAnotherNodeOrAPipelineRunLeavesTheAgentAlone) {
  const int64_t id = jenkins_.Enqueue("linux");
  const std::string name = ConnectFirstAgent();
  Pass();
  const int64_t other = jenkins_.Enqueue("linux");
  Pass();
  std::erase_if(jenkins_.queue,
                [&](const jenkins::QueueItem& i) { return i.id == id || i.id == other; });
  jenkins_.fates[id] = {true, false, "http://jenkins.test/job/j/1/"};
  jenkins_.runs["http://jenkins.test/job/j/1/"] = {false, "SUCCESS", "static-linux-1"};
  jenkins_.fates[other] = {true, false, "http://jenkins.test/job/p/2/"};
  jenkins_.runs["http://jenkins.test/job/p/2/"] = {false, "SUCCESS", ""};  // a Pipeline run
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 2);
  EXPECT_EQ(jenkins_.run_calls, 2);
  ASSERT_TRUE(jenkins_.nodes.contains(name));
  EXPECT_FALSE(jenkins_.nodes.at(name).temporarily_offline);
  for (const Agent& a : Agents()) EXPECT_EQ(a.builds, 0) << a.name;
}

// The CI failure that found this: the agent connected and took its 20-ms build after the pass's
// first look at the nodes, so the pass saw the item gone while the agent still looked starting.
TEST_F(ProvisionerTest, AnItemTakenWhileItsAgentStillLookedStartingIsAskedAboutOnceItLooksUnused) {
  const int64_t id = jenkins_.Enqueue("linux");
  Pass();
  const std::string name = jenkins_.nodes.begin()->first;
  slurm1_.SetState(slurm1_.jobs().begin()->first, {"RUNNING"});
  const std::string run = "http://jenkins.test/job/j/1/";
  jenkins_.after_next_computers = [&] {
    jenkins_.Connect(name);
    jenkins_.StartBuild(name, run);
  };
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 0) << "no agent looked unused";
  jenkins_.EndBuild(name);
  jenkins_.fates[id] = {true, false, run};
  jenkins_.runs[run] = {false, "SUCCESS", name};
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 1);
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << "drained: no second build";
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].builds, 1) << Events(name);
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 1) << "an item is asked about until its run is known";
}

// One after another before the look at the queue, a wave's descriptions held that look up by a
// Jenkins round trip each. Now they go side by side, after the pass's new agents were sent.
TEST_F(ProvisionerTest, NodesAreToldTheirSlurmJobsSideBySideAfterTheNewAgentsWereSent) {
  SideBySideJenkins jenkins(jenkins_);
  provisioner_ = MakeProvisioner(true, &jenkins, 4);
  jenkins_.Enqueue("linux");
  jenkins_.Enqueue("linux");
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 2u);
  std::vector<std::string> names;
  for (const auto& [name, node] : jenkins_.nodes) names.push_back(name);
  jenkins_.Enqueue("linux");
  jenkins.Arm({"SetDescription"}, 2);
  Pass();
  EXPECT_EQ(jenkins.most_in_flight("SetDescription"), 2);
  const std::vector<std::string> calls = jenkins.calls();
  const auto created = std::find(calls.begin(), calls.end(), "CreateNode");
  const auto described = std::find(calls.begin(), calls.end(), "SetDescription");
  ASSERT_NE(created, calls.end());
  EXPECT_LT(created - calls.begin(), described - calls.begin())
      << "the third item's agent was sent first";
  for (const std::string& name : names) {
    EXPECT_NE(jenkins_.nodes.at(name).description.find("; Slurm job "), std::string::npos)
        << name << ": " << jenkins_.nodes.at(name).description;
  }
  for (const Agent& a : Agents()) {
    if (a.name == names[0] || a.name == names[1]) {
      EXPECT_TRUE(a.described) << a.name << ": recorded, so it is not asked again";
    }
  }
}

// One after another, the two calls of each item that left, and the drain of each agent whose
// build was found so, held up the planning of the items that wait by up to 48 Jenkins round trips
// after a burst of short builds.
TEST_F(ProvisionerTest, TheItemsThatLeftAreAskedAboutSideBySide) {
  SideBySideJenkins jenkins(jenkins_);
  provisioner_ = MakeProvisioner(true, &jenkins, 4);
  const std::vector<std::string> names = RunTwoBuildsBetweenTwoPasses();
  ASSERT_EQ(jenkins_.fate_calls, 0);
  jenkins.Arm({"Fate", "Drain"}, 2);
  Pass();
  EXPECT_EQ(jenkins.most_in_flight("Fate"), 2);
  EXPECT_EQ(jenkins.most_in_flight("Drain"), 2) << "and their agents drained so";
  EXPECT_EQ(jenkins_.fate_calls, 2);
  for (const std::string& name : names) {
    EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << name << ": drained";
  }
  for (const Agent& a : Agents()) {
    EXPECT_EQ(a.builds, 1) << a.name;
    EXPECT_TRUE(a.drained) << a.name;
  }
}

// One after another, between the other agents' record writes, the last one-build agent of a wave
// whose builds started together stayed on the market the longest.
TEST_F(ProvisionerTest, AgentsWhoseBuildsStartedAreDrainedSideBySide) {
  SideBySideJenkins jenkins(jenkins_);
  provisioner_ = MakeProvisioner(true, &jenkins, 4);
  const std::vector<std::string> names = StartTwoBuilds();
  jenkins.Arm({"Drain"}, 2);
  Pass();
  EXPECT_EQ(jenkins.most_in_flight("Drain"), 2);
  for (const std::string& name : names) {
    EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << name << ": drained";
  }
  for (const Agent& a : Agents()) {
    EXPECT_EQ(a.builds, 1) << a.name;
    EXPECT_TRUE(a.drained) << a.name;
  }
}

// One after another, before the look at the queue, the deletes of a wave of agents whose builds
// ended held that look up by a Jenkins round trip each.
TEST_F(ProvisionerTest, TheNodesOfAgentsThatEndedAreDeletedSideBySide) {
  SideBySideJenkins jenkins(jenkins_);
  provisioner_ = MakeProvisioner(true, &jenkins, 4);
  const std::vector<std::string> names = StartTwoBuilds();
  Pass();
  for (const std::string& name : names) jenkins_.EndBuild(name);
  jenkins.Arm({"DeleteNode"}, 2);
  Pass();
  EXPECT_EQ(jenkins.most_in_flight("DeleteNode"), 2);
  EXPECT_TRUE(jenkins_.nodes.empty());
  for (const auto& [id, job] : slurm1_.jobs()) slurm1_.SetState(id, {"CANCELLED"});
  Pass();
  Pass();
  EXPECT_TRUE(Agents(false).empty()) << "both ended once their jobs did";
  for (const Agent& a : Agents()) EXPECT_EQ(a.phase, AgentPhase::kDone) << a.name;
}

TEST_F(ProvisionerTest, AnItemWhoseFateCouldNotBeAskedIsAskedAgainButNotPastTheWindow) {
  unused_agent_limit_ = 1h;  // the agent outlives the window
  provisioner_ = MakeProvisioner();
  const int64_t id = jenkins_.Enqueue("linux");
  const std::string name = ConnectFirstAgent();
  Pass();
  std::erase_if(jenkins_.queue, [&](const jenkins::QueueItem& i) { return i.id == id; });
  jenkins_.fail_fates = true;
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 1);
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 2) << "a failed call is asked again";
  Advance(5min);
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 2) << "Jenkins has forgotten it by now";
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kOnline) << Events(name);
  EXPECT_EQ(Agents()[0].builds, 0) << Events(name);
}

// Jenkins hands an idle one-build agent the next item as soon as a short build ends: the node is
// taken off the market before the build is recorded (a disk sync), in both ways a build is found.
TEST_F(ProvisionerTest, AOneBuildAgentSeenBuildingIsDrainedBeforeItsBuildIsRecorded) {
  std::vector<int> builds_at_drain;
  jenkins_.on_drain = [&](const std::string&) { builds_at_drain.push_back(Agents()[0].builds); };
  StartOneBuild();
  EXPECT_EQ(builds_at_drain, std::vector<int>{0});
  EXPECT_EQ(Agents()[0].builds, 1);
}

TEST_F(ProvisionerTest, AOneBuildAgentWhoseBuildIsFoundThroughItsItemIsDrainedFirst) {
  const int64_t id = jenkins_.Enqueue("linux");
  const std::string name = ConnectFirstAgent();
  Pass();
  const std::string run = "http://jenkins.test/job/j/1/";
  std::erase_if(jenkins_.queue, [&](const jenkins::QueueItem& i) { return i.id == id; });
  jenkins_.fates[id] = {true, false, run};
  jenkins_.runs[run] = {false, "SUCCESS", name};
  std::vector<int> builds_at_drain;
  jenkins_.on_drain = [&](const std::string&) { builds_at_drain.push_back(Agents()[0].builds); };
  Pass();
  EXPECT_EQ(builds_at_drain, std::vector<int>{0});
  EXPECT_EQ(Agents()[0].builds, 1);
}

TEST_F(ProvisionerTest, ABuildSeenOnItsNodeCostsNoQuestionsAboutTheQueue) {
  StartOneBuild();
  jenkins_.queue.clear();
  Pass();
  Pass();
  EXPECT_EQ(jenkins_.fate_calls, 0);
}

TEST_F(ProvisionerTest, IdleMinutesKeepsTheAgentForTheNextBuild) {
  jenkins_.Enqueue("reusable");
  const std::string name = ConnectFirstAgent();
  jenkins_.StartBuild(name, "http://jenkins.test/job/j/1/");
  Pass();
  EXPECT_FALSE(jenkins_.nodes.at(name).temporarily_offline);
  jenkins_.EndBuild(name);
  Pass();
  jenkins_.Enqueue("reusable");
  Pass();
  EXPECT_EQ(jenkins_.created, 1) << "the idle agent takes the second item";
  jenkins_.StartBuild(name, "http://jenkins.test/job/j/2/");
  Pass();
  jenkins_.EndBuild(name);
  Pass();
  Advance(119s);
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u);
  Advance(2s);
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << "first taken off the market";
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  EXPECT_EQ(Agents()[0].builds, 2);
  EXPECT_EQ(LiveJobs(slurm1_), 0);
}

// One after another, the drains of a wave of reusable agents that ended idle together held up the
// look at the queue by a Jenkins round trip each.
TEST_F(ProvisionerTest, IdleAgentsThatEndTogetherAreDrainedSideBySide) {
  SideBySideJenkins jenkins(jenkins_);
  provisioner_ = MakeProvisioner(true, &jenkins, 4);
  jenkins_.Enqueue("reusable");
  jenkins_.Enqueue("reusable");
  const std::vector<std::string> names = ConnectAgentsForTwoItems();
  jenkins_.queue.clear();
  Pass();
  Advance(121s);
  jenkins.Arm({"Drain"}, 2);
  Pass();
  EXPECT_EQ(jenkins.most_in_flight("Drain"), 2);
  for (const std::string& name : names) {
    ASSERT_TRUE(jenkins_.nodes.contains(name)) << name << ": deleted only once seen idle again";
    EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << name;
  }
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  for (const Agent& a : Agents()) EXPECT_TRUE(a.drained) << a.name;
}

// CONTRACT.md 7.2: delete only after the build has finished. An item Jenkins hands the idle agent
// after the look that decided to end it is not cut off: the agent is drained first, and its node
// deleted once it is seen idle.
TEST_F(ProvisionerTest, AnIdleAgentGivenABuildJustBeforeItsEndKeepsItsNodeUntilTheBuildEnds) {
  jenkins_.Enqueue("reusable");
  const std::string name = ConnectFirstAgent();
  jenkins_.StartBuild(name, "http://jenkins.test/job/j/1/");
  Pass();
  jenkins_.EndBuild(name);
  jenkins_.queue.clear();
  Pass();
  Advance(121s);
  // Jenkins gives it an item right after the provisioner's look at the node, before the drain
  jenkins_.after_next_computers = [&] {
    jenkins_.StartBuild(name, "http://jenkins.test/job/j/2/");
  };
  Pass();
  ASSERT_TRUE(jenkins_.nodes.contains(name)) << "not deleted under the new build";
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline);
  Pass();
  EXPECT_TRUE(jenkins_.nodes.contains(name)) << "its build still runs";
  jenkins_.EndBuild(name);
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains(name));
  EXPECT_EQ(LiveJobs(slurm1_), 0);
}

TEST_F(ProvisionerTest, AnIdleAgentThatTookItsItemMeanwhileIsNotCountedForNewItems) {
  jenkins_.Enqueue("linux");
  Pass();
  const std::string first = jenkins_.nodes.begin()->first;
  slurm1_.SetState(slurm1_.jobs().begin()->first, {"RUNNING"});
  jenkins_.Connect(first);
  Pass();  // online and idle, its item still queued: nothing new
  ASSERT_EQ(jenkins_.created, 1);

  PassInWhichTheAgentTakesItsItemAfterTheFirstLook(first, /*connect=*/false);

  // the two new agents connect and take the two items
  int build = 2;
  for (auto& [name, node] : jenkins_.nodes) {
    if (name == first) continue;
    jenkins_.Connect(name);
    jenkins_.StartBuild(name, "http://jenkins.test/job/j/" + std::to_string(build++) + "/");
  }
  for (auto& [id, job] : slurm1_.jobs()) slurm1_.SetState(id, {"RUNNING"});
  Pass();
  const int computers_steady = jenkins_.computers_calls;
  Pass();
  EXPECT_EQ(jenkins_.computers_calls - computers_steady, 1)
      << "every agent of ours builds: one look at the nodes per pass";
  EXPECT_EQ(jenkins_.created, 3);
}

TEST_F(ProvisionerTest, AStartingAgentThatConnectedAndTookItsItemMeanwhileIsNotCountedForNewItems) {
  jenkins_.Enqueue("linux");
  Pass();
  ASSERT_EQ(jenkins_.created, 1);
  const std::string first = jenkins_.nodes.begin()->first;
  slurm1_.SetState(slurm1_.jobs().begin()->first, {"RUNNING"});
  PassInWhichTheAgentTakesItsItemAfterTheFirstLook(first, /*connect=*/true);
}

TEST_F(ProvisionerTest, FolderRestrictedCloudSkipsOtherFoldersWithAnEvent) {
  jenkins_.Enqueue("gpu", "http://jenkins.test/job/team-b/job/train/");
  jenkins_.Enqueue("gpu", "http://jenkins.test/job/team-a/job/sub/job/train/");
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  EXPECT_TRUE(jenkins_.nodes.begin()->first.starts_with("c2-gpu-"));
  EXPECT_NE(Events("queue-1").find("serves only the folders team-a; the job is in folder team-b"),
            std::string::npos)
      << Events("queue-1");
  Pass();
  EXPECT_EQ(Events("queue-1").find("skipped"), Events("queue-1").rfind("skipped"))
      << "told once per item";
}

// After an unclean restart Jenkins numbers its queue from 1 again (CONTRACT.md 2.2): an item of
// the new session is not the one of the old session that had its id.
TEST_F(ProvisionerTest, AQueueIdOfTheLastJenkinsSessionIsNotTakenForANewItem) {
  jenkins_.Enqueue("gpu", "http://jenkins.test/job/team-b/job/train/");
  Pass();
  jenkins_.session = "s2";
  jenkins_.queue.clear();
  jenkins_.next_id = 1;
  jenkins_.Enqueue("gpu", "http://jenkins.test/job/team-c/job/train/");
  Pass();
  EXPECT_NE(Events("queue-1").find("the job is in folder team-c"), std::string::npos)
      << Events("queue-1");
}

TEST_F(ProvisionerTest, AnEphemeralTemplateFromAFolderTheCloudDoesNotServeIsRefused) {
  const std::string kJar = R"({"agent": {"jar_path": "/opt/agent.jar"}})";
  auto refused = templates_->Register("c2", kJar, 60s, "team-b/train #4", "team-b/train");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Code::kForbidden);
  EXPECT_EQ(refused.error().where, "job");
  EXPECT_EQ(refused.error().message,
            "cloud c2 serves only jobs in the folders team-a; team-b/train is in folder team-b. "
            "Use a cloud that serves it, or add the folder to authorizedFolders of c2");
  auto top = templates_->Register("c2", kJar, 60s, "train #1", "train");
  ASSERT_FALSE(top);
  EXPECT_NE(top.error().message.find("train is in no folder"), std::string::npos);
  // a folder that only starts like an authorized one is another folder
  EXPECT_FALSE(templates_->Register("c2", kJar, 60s, "x", "team-ab/train"));
  EXPECT_TRUE(templates_->Ephemeral().empty());

  EXPECT_TRUE(templates_->Register("c2", kJar, 60s, "ok", "team-a/sub/train"));
  EXPECT_TRUE(templates_->Register("c2", kJar, 60s, "curl", "")) << "no job named: not checked";
  EXPECT_TRUE(templates_->Register("c1", kJar, 60s, "any", "team-b/train")) << "c1 is open";
  EXPECT_EQ(templates_->Ephemeral().size(), 3u);
}

TEST_F(ProvisionerTest, TheDebugLogTellsEachItemsDecisionWhenItChanges) {
  jenkins_.Enqueue("linux", "http://jenkins.test/job/team-a/job/build/");
  jenkins_.queue.back().task_name = "build";
  jenkins_.Enqueue("arm");
  jenkins_.Enqueue("gpu", "http://jenkins.test/job/team-b/job/train/");
  jenkins_.queue.back().task_name = "train";
  Pass();
  EXPECT_EQ(debug_lines_,
            (std::vector<std::string>{
                "queue item 1 (team-a/build) wants 'linux' from /scriptText: a new agent from "
                "cloud c1, template cpu",
                "queue item 2 wants 'arm' from /scriptText: no template of any cloud serves it "
                "(c1: cpu 'linux cpu', reuse 'reusable'; c2: gpu 'gpu')",
                "queue item 3 (team-b/train) wants 'gpu' from /scriptText: held back: cloud c2 "
                "serves only the folders team-a; the job is in folder team-b"}));
  debug_lines_.clear();
  Pass();  // the first item's agent is starting
  EXPECT_EQ(debug_lines_, (std::vector<std::string>{
                              "queue item 1 (team-a/build) wants 'linux' from /scriptText: an idle "
                              "executor or an agent still starting takes it"}));
  debug_lines_.clear();
  Pass();
  EXPECT_TRUE(debug_lines_.empty()) << "nothing changed, nothing told";
}

TEST_F(ProvisionerTest, AnItemsLabelIsReadAsJenkinsReadsIt) {
  // A project's own text, read by Jenkins.getLabel: `!!linux` does not parse, so it is one atom
  // no agent of ours carries; `"linux"&&"linux"` is unquoted whole first, which leaves one atom
  // too; `'linux'` is linux.
  jenkins_.administer = false;
  jenkins_.Enqueue("!!linux");
  jenkins_.Enqueue(R"("linux"&&"linux")");
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  jenkins_.Enqueue("'linux'");
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u);
  EXPECT_EQ(slurm1_.jobs().size(), 1u);
}

TEST_F(ProvisionerTest, ALabelJenkinsWroteOutIsNotUnquotedWhole) {
  // /scriptText returns Label.getExpression(), its atoms quoted where needed
  // (`"gpu:a100"&&"os/linux"`): quotes at both ends are two atoms', not one text's.
  const int64_t id = jenkins_.Enqueue("linux && cpu", "http://jenkins.test/job/p/1/", false);
  jenkins_.exact[id] = R"("linux"&&"cpu")";
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u);
}

TEST_F(ProvisionerTest, WithoutAdministerPipelineLabelsComeFromWhy) {
  jenkins_.administer = false;
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/3/", /*freestyle=*/false);
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u);
  EXPECT_EQ(provisioner_->Report().label_mode, "expression");
  EXPECT_NE(provisioner_->Report().label_reason.find("/scriptText was refused"), std::string::npos);
}

// CONTRACT.md §2.3: when the label has one node, `why` names the node, not the label.
TEST_F(ProvisionerTest, WithoutAdministerAWhyNamingOneOfOurAgentsStandsForItsTemplatesLabels) {
  jenkins_.administer = false;
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/1/", false);
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  const std::string node = jenkins_.nodes.begin()->first;
  // Jenkins now names the starting node for every item of the label.
  const std::string offline = "\u2018" + node + "\u2019 is offline";
  jenkins_.queue.back().why = offline;
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u) << "one item, one starting agent: nothing more";
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/2/", false);
  jenkins_.queue.back().why = offline;
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/3/", false);
  jenkins_.queue.back().why = offline;
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 3u) << "three items, one agent starting: two more";
  for (const auto& [name, spec] : jenkins_.specs) EXPECT_EQ(spec.labels, "linux cpu") << name;
}

TEST_F(ProvisionerTest, WithoutAdministerAWhyNamingOurBusyAgentAsksForAnother) {
  jenkins_.administer = false;
  const int64_t first = jenkins_.Enqueue("linux", "http://jenkins.test/job/p/1/", false);
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  const std::string node = jenkins_.nodes.begin()->first;
  std::erase_if(jenkins_.queue, [&](const jenkins::QueueItem& i) { return i.id == first; });
  jenkins_.Connect(node);
  jenkins_.StartBuild(node, "http://jenkins.test/job/p/1/1/");
  Pass();
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/2/", false);
  jenkins_.queue.back().why = "Waiting for next available executor on \u2018" + node + "\u2019";
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 2u);
}

// A node that is not one of our agents says nothing about which template would serve the item.
TEST_F(ProvisionerTest, WithoutAdministerAWhyNamingAnotherNodeGivesNoLabel) {
  jenkins_.administer = false;
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/1/", false);
  jenkins_.queue.back().why = "\u2018static-linux-1\u2019 is offline";
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
}

TEST_F(ProvisionerTest, AFailedScriptCallIsNotARefusal) {
  jenkins_.script_fails = true;
  jenkins_.Enqueue("linux", "http://jenkins.test/job/p/1/", /*freestyle=*/false);
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u) << "served from why meanwhile";
  EXPECT_EQ(provisioner_->Report().label_mode, "script");
  EXPECT_NE(provisioner_->Report().label_reason.find("its last call failed"), std::string::npos)
      << provisioner_->Report().label_reason;
  jenkins_.script_fails = false;
  const int before = jenkins_.script_calls;
  Pass();
  EXPECT_GT(jenkins_.script_calls, before) << "asked again at the next pass, not 600 s later";
  EXPECT_NE(provisioner_->Report().label_reason.find("exact labels of every queue item"),
            std::string::npos)
      << provisioner_->Report().label_reason;
}

TEST_F(ProvisionerTest, ExactLabelsAreAskedWithTheQueueOnlyWhileItemsWait) {
  Pass();  // the start-up probe of the label mode
  Pass();
  EXPECT_EQ(jenkins_.script_calls, 1);
  jenkins_.Enqueue("windows", "http://jenkins.test/job/p/1/", /*freestyle=*/false);  // unserved
  Pass();
  EXPECT_EQ(jenkins_.script_calls, 2);  // after the queue: it was idle before
  Pass();
  EXPECT_EQ(jenkins_.script_calls, 3);  // with the queue, and not again after it
  jenkins_.queue.clear();
  Pass();
  EXPECT_EQ(jenkins_.script_calls, 4);  // with the queue, which turned out idle
  Pass();
  Pass();
  EXPECT_EQ(jenkins_.script_calls, 4);
}

TEST_F(ProvisionerTest, AnItemTheLabelsAskedWithTheQueueMissedIsAskedForAgain) {
  jenkins_.Enqueue("windows", "http://jenkins.test/job/p/1/", /*freestyle=*/false);  // unserved
  Pass();
  const int before = jenkins_.script_calls;
  const int64_t id = jenkins_.Enqueue("linux", "http://jenkins.test/job/p/2/", /*freestyle=*/false);
  jenkins_.queue.back().why.clear();  // no hint: only /scriptText knows its label
  jenkins_.unseen_by_script = {id};
  Pass();
  EXPECT_EQ(jenkins_.script_calls, before + 2);
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  EXPECT_EQ(jenkins_.specs.begin()->second.labels, "linux cpu");
}

TEST_F(ProvisionerTest, ARestartedProvisionerResumesWithoutDuplicates) {
  jenkins_.Enqueue("linux");
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  provisioner_ = MakeProvisioner();
  Pass();
  Pass();
  EXPECT_EQ(jenkins_.created, 1);
  EXPECT_EQ(slurm1_.jobs().size(), 1u);
}

TEST_F(ProvisionerTest, AOneBuildAgentRestartedAfterItsBuildEndedIsEnded) {
  const std::string name = StartOneBuild();
  // Killed after recording the build's end, before ending the agent: the store holds an online
  // agent with its one build done and none running.
  RewriteStoredAgent([](Agent& agent) { agent.build_url.clear(); });
  jenkins_.EndBuild(name);
  provisioner_ = MakeProvisioner();
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  EXPECT_EQ(LiveJobs(slurm1_), 0);
  Pass();
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kDone);
}

// Restarted without the agent's cloud: the agent ends after its build and its node goes, so
// no build lands on an agent whose job nothing tracks; its job is not cancelled (nothing can).
TEST_F(ProvisionerTest, AnAgentOfACloudRemovedFromTheConfigurationEndsAfterItsBuild) {
  const std::string name = StartOneBuild();
  provisioner_ = MakeProvisioner(/*with_c1=*/false);
  Pass();
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kTerminating);
  EXPECT_EQ(jenkins_.nodes.count(name), 1u) << "its build runs on";
  EXPECT_NE(Events(name).find("cloud c1 is no longer configured: ending the agent once no build "
                              "runs on it; Slurm job "),
            std::string::npos)
      << Events(name);
  jenkins_.EndBuild(name);
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kDone);
  EXPECT_EQ(LiveJobs(slurm1_), 1) << "no engine of c1 runs to cancel it";
}

TEST_F(ProvisionerTest, AOneBuildAgentRestartedBeforeItsDrainIsDrained) {
  const std::string name = StartOneBuild();
  // Killed after recording the build's start, before the drain reached Jenkins.
  RewriteStoredAgent([](Agent& agent) { agent.drained = false; });
  jenkins_.nodes.at(name).temporarily_offline = false;
  jenkins_.nodes.at(name).offline = false;
  provisioner_ = MakeProvisioner();
  Pass();
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline) << "drained: it takes no second build";
  EXPECT_TRUE(Agents()[0].drained);
}

// Jenkins before 2.482 does not keep temporarilyOffline across a restart.
TEST_F(ProvisionerTest, ADrainJenkinsForgotIsSentAgain) {
  const std::string name = StartOneBuild();
  ASSERT_TRUE(jenkins_.nodes.at(name).temporarily_offline);
  jenkins_.nodes.at(name).temporarily_offline = false;
  jenkins_.nodes.at(name).offline = false;
  jenkins_.session = "s2";
  Pass();
  EXPECT_TRUE(jenkins_.nodes.at(name).temporarily_offline);
}

TEST_F(ProvisionerTest, AStrayNodeWithOurMarkerIsDeleted) {
  CreateStrayNode("c1-cpu-1-99");
  jenkins::NodeSpec foreign{"static-1", "a static agent",           "/tmp",
                            "linux",    jenkins::NodeMode::kNormal, 1};
  ASSERT_TRUE(jenkins_.CreateNode(foreign));
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains("c1-cpu-1-99"));
  EXPECT_TRUE(jenkins_.nodes.contains("static-1"));
}

// A Pipeline block's executor stays busy after its agent is gone, until the node is removed:
// only a stray whose agent is connected is left to finish its build.
TEST_F(ProvisionerTest, AStrayNodeStillBusyAfterItsAgentLeftIsDeleted) {
  CreateStrayNode("c1-cpu-1-96");
  CreateStrayNode("c1-cpu-1-97");
  jenkins_.StartBuild("c1-cpu-1-96", "http://jenkins.test/job/p/1/");
  jenkins_.Connect("c1-cpu-1-97");
  jenkins_.StartBuild("c1-cpu-1-97", "http://jenkins.test/job/p/2/");
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains("c1-cpu-1-96"));
  EXPECT_TRUE(jenkins_.nodes.contains("c1-cpu-1-97")) << "its build runs on";
  jenkins_.EndBuild("c1-cpu-1-97");
  Pass();
  EXPECT_FALSE(jenkins_.nodes.contains("c1-cpu-1-97"));
}

// A node name Jenkins refuses may be another's node: the agent ends without deleting it.
TEST_F(ProvisionerTest, AnAgentWhoseNodeJenkinsRefusedDeletesNoNode) {
  jenkins_.fail_create = FakeJenkinsClient::Failure{Code::kConflict, "already exists"};
  jenkins_.Enqueue("linux");
  Pass();
  Pass();
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kFailed) << Events(Agents()[0].name);
  EXPECT_EQ(jenkins_.delete_calls, 0);
}

// After a restart that lost the state, or a wave of agents whose records could not be written,
// one delete after another held up the look at the queue by a round trip per node.
TEST_F(ProvisionerTest, StrayNodesAreDeletedSideBySide) {
  SideBySideJenkins jenkins(jenkins_);
  provisioner_ = MakeProvisioner(true, &jenkins, 4);
  CreateStrayNode("c1-cpu-1-98");
  CreateStrayNode("c1-cpu-1-99");
  jenkins.Arm({"DeleteNode"}, 2);
  Pass();
  EXPECT_EQ(jenkins.most_in_flight("DeleteNode"), 2);
  EXPECT_TRUE(jenkins_.nodes.empty());
}

TEST_F(ProvisionerTest, EphemeralTemplateServesItsLabelAndExpires) {
  auto e = templates_->Register(
      "c1", R"({"job": {"cpus_per_task": 2}, "agent": {"jar_path": "/opt/agent.jar"}})", 60s, "p#1",
      "");
  ASSERT_TRUE(e) << (e ? "" : e.error().ToString());
  EXPECT_EQ(e->label, "slurmfleet-" + e->name);
  jenkins_.Enqueue(e->label);
  Pass();
  ASSERT_EQ(jenkins_.nodes.size(), 1u);
  const slurm::JobRequest& request = slurm1_.request_of(slurm1_.jobs().begin()->first);
  EXPECT_EQ(request.cpus_per_task, 2);
  EXPECT_EQ(request.current_working_directory, "/tmp/jenkins-c1");
  auto bad = templates_->Register("c1", R"({"job": {"cpus_per_tsk": 2}})", 60s, "p#2", "");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Code::kInvalidInput);
  EXPECT_TRUE(bad.error().where.starts_with("json")) << bad.error().where;
  // what the template's resolution finds wrong is named by the JSON's path, not a config key
  for (const auto& [json, where] : std::initializer_list<std::pair<std::string, std::string>>{
           {R"({"job": {"current_working_directory": "tmp/x"}})",
            "json.job.current_working_directory"},
           {R"({"job": {"current_working_directory": "/tmp/x"}})", "json.agent.jar_path"},
           {R"({"pyxis": {"containerImage": "/i.sqsh", "containerWorkdir": "w"}})",
            "json.pyxis.containerWorkdir"}}) {
    auto refused = templates_->Register("c1", json, 60s, "p#3", "");
    ASSERT_FALSE(refused) << json;
    EXPECT_EQ(refused.error().where, where) << json << ": " << refused.error().ToString();
  }
  // in use: kept past its TTL; unused: gone
  Advance(120s);
  Pass();
  EXPECT_EQ(templates_->Ephemeral().size(), 1u);
  jenkins_.nodes.clear();
  jenkins_.queue.clear();
  Pass();
  Advance(120s);
  Pass();
  EXPECT_TRUE(templates_->Ephemeral().empty());
}

// A pipeline's node() that waits past its template's TTL with no agent alive for it (here: Slurm
// refuses every job, and the template backs off for longer than the TTL between tries) keeps the
// template: ending it would leave the item waiting for ever with no word why.
TEST_F(ProvisionerTest, AnEphemeralTemplateAnItemWaitsForDoesNotExpire) {
  auto e =
      templates_->Register("c1", R"({"agent": {"jar_path": "/opt/agent.jar"}})", 60s, "p#1", "");
  ASSERT_TRUE(e) << (e ? "" : e.error().ToString());
  slurm1_.reject_submits = 1000;
  jenkins_.Enqueue(e->label);
  for (int i = 0; i < 80; ++i) {
    Pass();
    Advance(5s);
  }
  EXPECT_GE(jenkins_.created, 4) << "launched, failed and backed off several times";
  EXPECT_EQ(templates_->Ephemeral().size(), 1u) << "expired while an item waited for it";
  jenkins_.queue.clear();
  for (int i = 0; i < 4; ++i) {
    Pass();
    Advance(60s);
  }
  Pass();
  EXPECT_TRUE(templates_->Ephemeral().empty());
}

TEST_F(ProvisionerTest, AnAgentThatCannotBeCreatedGivesItsCapacityBack) {
  jenkins_.Enqueue("linux");
  FakeJenkinsClient::Failure refuse{Code::kUnavailable, "connection reset"};
  jenkins_.fail_create = refuse;  // Jenkins' node API keeps failing
  Pass();
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kCreating);
  Advance(5min);
  Pass();
  EXPECT_EQ(Agents()[0].phase, AgentPhase::kFailed);
  EXPECT_NE(Agents()[0].outcome.find("Timeout launching the agent"), std::string::npos);
  EXPECT_TRUE(slurm1_.jobs().empty());
}

TEST_F(ProvisionerTest, QuietingDownStartsNothing) {
  jenkins_.quieting_down = true;
  jenkins_.Enqueue("linux");
  Pass();
  EXPECT_TRUE(jenkins_.nodes.empty());
}

}  // namespace
}  // namespace slurmfleet::fleet

namespace slurmfleet::fleet {
namespace {

TEST_F(ProvisionerTest, ReloadSwapsCapsAndTemplatesButRefusesANewCloudSet) {
  std::string text(kConfig);
  text.replace(text.find("instanceCap: 3"), 14, "instanceCap: 1");
  config::LoadResult changed = config::LoadConfigText(text, "test.yaml", {});
  ASSERT_TRUE(changed.ok());
  ASSERT_TRUE(templates_->Reload(changed.config));
  for (int i = 0; i < 3; ++i) jenkins_.Enqueue("linux");
  Pass();
  Pass();
  EXPECT_EQ(jenkins_.nodes.size(), 1u) << "the reloaded cap holds";

  config::Config fewer = changed.config;
  fewer.clouds.pop_back();
  Status refused = templates_->Reload(fewer);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Code::kInvalidInput);
  EXPECT_NE(refused.error().message.find("needs a restart"), std::string::npos);
  EXPECT_EQ(templates_->Snapshot().size(), 2u) << "nothing changed";
}

}  // namespace
}  // namespace slurmfleet::fleet
