// Jenkins agents end to end: the provisioner and the engine, through HTTP, against the stand-in
// Jenkins (tests/jenkins/standin/) and the real Slurm testbed. The agent of every job is the
// stand-in agent (standin-java, copied into the testbed's rootfs and configured as javaPath), so
// each build here really went: queue item -> node -> Slurm job -> agent connected over /wsagents/
// -> build -> node deleted -> job ended. Needs the running testbed.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fleet/agents_testbed_fixture.h"

namespace slurmfleet::fleet {
namespace {

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

// CONTRACT.md 6: a build over before the provisioner looks at its node again is found through the
// item it came from. The agent is then drained, so the next item gets an agent of its own instead
// of the idle one-build agent.
TEST_F(ProvisionerIntegrationTest, ABuildTooShortToBeSeenIsStillTheAgentsOnlyOne) {
  Start(Cloud("tb", 4, Template("cpu", "linux")));
  jenkins_->EnqueueFreestyle("blink", "linux", 20ms);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 1; }, 90s))
      << AllEvents();
  // The daemon notices the build between two looks at the node. Unnoticed, the agent stays at
  // 0 builds until the fixture's 20-s unused limit ends it, and would have taken the next item.
  auto noticed = [this] {
    std::vector<Agent> agents = Agents();
    return agents.size() == 1 && agents[0].builds == 1;
  };
  for (int i = 0; i < 300 && !noticed(); ++i) std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(noticed()) << AllEvents();
  jenkins_->EnqueueFreestyle("blink", "linux", 20ms);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 2; }, 90s))
      << AllEvents();
  auto stats = jenkins_->Stats();
  EXPECT_NE(stats.completed_builds[0].built_on, stats.completed_builds[1].built_on) << AllEvents();
  ExpectNothingLeft();
}

// The spec's setupScript example is `module load java/21`. The testbed has Environment Modules
// (Debian's environment-modules) as sites have it; a modulefile puts the stand-in agent's java on
// PATH, so the agent connects only if the job could `module load` without a login shell.
TEST_F(ProvisionerIntegrationTest, ASetupScriptLoadsJavaWithModuleLoad) {
  const std::string modulefile =
      testbed_.root + "/etc/environment-modules/modules/slurmfleet-standin-java";
  ASSERT_TRUE(std::filesystem::is_directory(std::filesystem::path(modulefile).parent_path()))
      << "the testbed has no Environment Modules: restart it with testbed/testbed.sh, which "
         "installs environment-modules in the rootfs";
  std::ofstream(modulefile) << "#%Module1.0\nprepend-path PATH " << standin::kStandinAgentDir
                            << "\n";
  Start(Cloud("tb", 2,
              "          - name: mod\n            label: modules\n"
              "            workingDirectory: /tmp/jenkins\n            memoryPerNode: 10\n"
              "            agentLaunch:\n              jarPath: {DIR}/agent.jar\n"
              "              setupScript: module load slurmfleet-standin-java\n"));
  jenkins_->EnqueueFreestyle("with-modules", "modules", 1s);
  const bool built =
      jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 1; }, 90s);
  std::filesystem::remove(modulefile);
  ASSERT_TRUE(built) << AllEvents();
  EXPECT_EQ(jenkins_->Stats().completed_builds[0].result, "SUCCESS");
  ExpectNothingLeft();
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
  std::vector<Agent> agents = AgentsOnceTheFirstFailed(45s);
  ASSERT_FALSE(agents.empty());
  ASSERT_EQ(agents[0].phase, AgentPhase::kFailed) << AllEvents();
  EXPECT_NE(agents[0].outcome.find("ended before the agent connected"), std::string::npos)
      << agents[0].outcome;
  EXPECT_NE(agents[0].outcome.find("FAILED"), std::string::npos) << agents[0].outcome;
  jenkins_->CancelItem(item);
  ExpectNothingLeft();
}

// CONTRACT.md 8: a node whose Java is too old for agent.jar fails fast, and the job's output
// says which Java it found and what to change.
TEST_F(ProvisionerIntegrationTest, AnOldJavaOnTheNodeFailsFastSayingSo) {
  const std::string java = OldJava();
  std::string old = Template("oldjava", "old-java");
  old.replace(old.find("{DIR}/java"), 10, java);
  Start(Cloud("tb", 4, old));
  int64_t item = jenkins_->EnqueueFreestyle("needs-java", "old-java", 1s);
  std::vector<Agent> agents = AgentsOnceTheFirstFailed(45s);
  std::filesystem::remove(testbed_.root + java);
  ASSERT_FALSE(agents.empty());
  const std::string said = FailedJobOutput(agents[0]);
  EXPECT_NE(said.find("slurmfleet: \"" + java + "\" on n"), std::string::npos) << said;
  EXPECT_NE(said.find(" is Java 11.0.22; the Jenkins agent needs Java 17 or newer: set the "
                      "template's javaPath, or load a newer Java in its setupScript"),
            std::string::npos)
      << said;
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
  std::vector<Agent> agents = AgentsOnceTheFirstFailed(100s);
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
  // At cold start only the label's load statistics (a 10-s moving average) hint at the label.
  jenkins_->EnqueuePipeline("pipe", "linux", 2s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.nodes_created >= 1; }, 60s))
      << AllEvents();
  // Then `why` names the label's one node, not the label: these two are served through it.
  jenkins_->EnqueuePipeline("pipe", "linux", 2s);
  jenkins_->EnqueuePipeline("pipe", "linux", 2s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 3; }, 120s))
      << AllEvents();
  EXPECT_EQ(provisioner_->Report().label_mode, "expression");
  ExpectNothingLeft();
}

// A Slurm job that dies under a running Pipeline block: Jenkins keeps the block's executor busy
// until the node is removed, so the daemon must not wait for that "build" to end.
TEST_F(ProvisionerIntegrationTest, AJobThatDiesUnderAPipelineBlockLeavesNothing) {
  Start(Cloud("tb", 4, Template("cpu", "linux")));
  jenkins_->EnqueuePipeline("pipe", "linux", 300s);
  auto building = [this] {
    std::vector<Agent> agents = Agents();
    return agents.size() == 1 && !agents[0].build_url.empty();
  };
  for (int i = 0; i < 600 && !building(); ++i) std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(building()) << AllEvents();
  std::vector<slurm::JobInfo> jobs = LiveTaggedJobs();
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(client_->Cancel({jobs[0].job_id, jobs[0].sluid}));
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 1; }, 60s))
      << AllEvents();
  EXPECT_EQ(jenkins_->Stats().completed_builds[0].result, "ABORTED");
  ExpectNothingLeft();
  EXPECT_NE(AllEvents().find("ended while its agent was online"), std::string::npos) << AllEvents();
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
