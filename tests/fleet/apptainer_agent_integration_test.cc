// Jenkins agents launched with Apptainer, end to end on the real testbed. The template's image
// (built by standin-agent-image) holds the stand-in agent at a path that exists only inside it,
// so a build that runs proves that the agent's job started it with `apptainer exec`. Needs a
// testbed with apptainer (TESTBED_APPTAINER=1, the default on the sid testbed); scripts/test.sh
// leaves this label out where Debian has no apptainer package.
#include "fleet/agents_testbed_fixture.h"

namespace slurmfleet::fleet {
namespace {

class ApptainerAgentIntegrationTest : public ProvisionerIntegrationTest {
 protected:
  static void SetUpTestSuite() {
    slurm::Testbed tb;
    if (!tb.Missing().empty()) return;  // SetUp fails on it
    image_error_ = standin::BuildStandinAgentImage(
        tb.root, std::string(SLURMFLEET_TESTDATA_DIR) + "/../testbed/testbed.sh");
  }

  void SetUp() override {
    ProvisionerIntegrationTest::SetUp();
    ASSERT_EQ(image_error_, "") << "the agent's Apptainer image could not be built; start the "
                                   "testbed with TESTBED_APPTAINER=1";
  }

  // A template whose agent runs in the stand-in agent's image.
  static std::string ImageTemplate(const std::string& name, const std::string& label) {
    const std::string dir = standin::kImageAgentDir;
    return "          - name: " + name + "\n            label: " + label +
           "\n            workingDirectory: /tmp/jenkins\n            memoryPerNode: 10\n"
           "            apptainer:\n              image: " +
           standin::kStandinAgentImage + "\n              binds: [/tmp/jenkins]\n" +
           "              javaPath: " + dir + "/java\n              jarPath: " + dir +
           "/agent.jar\n";
  }

  static inline std::string image_error_;
};

TEST_F(ApptainerAgentIntegrationTest, ABuildRunsOnAnAgentInsideTheImageThenEverythingIsGone) {
  Start(Cloud("tb", 2, ImageTemplate("sif", "sif")));
  jenkins_->EnqueueFreestyle("in-image", "sif", 2s);
  ASSERT_TRUE(jenkins_->WaitFor([](const auto& s) { return s.completed_builds.size() == 1; }, 120s))
      << AllEvents();
  auto stats = jenkins_->Stats();
  EXPECT_EQ(stats.completed_builds[0].result, "SUCCESS");
  EXPECT_TRUE(stats.completed_builds[0].built_on.starts_with("tb-sif-"));
  ExpectNothingLeft();
  const std::string events = AllEvents();
  EXPECT_NE(events.find("Agent connected after"), std::string::npos) << events;
}

TEST_F(ApptainerAgentIntegrationTest, AnImageThatDoesNotExistFailsFastAndLeavesNothing) {
  std::string missing = ImageTemplate("nosif", "nosif");
  missing.replace(missing.find(standin::kStandinAgentImage),
                  std::string(standin::kStandinAgentImage).size(), "/nonexistent/agent.sif");
  Start(Cloud("tb", 2, missing));
  int64_t item = jenkins_->EnqueueFreestyle("no-image", "nosif", 1s);
  // apptainer exits at once, so the job ends before its agent connects: the fail-fast path, not
  // agentTimeoutMinutes (5 min) running out
  std::vector<Agent> agents = AgentsOnceTheFirstFailed(60s);
  ASSERT_FALSE(agents.empty());
  ASSERT_EQ(agents[0].phase, AgentPhase::kFailed) << AllEvents();
  EXPECT_NE(agents[0].outcome.find("ended before the agent connected"), std::string::npos)
      << agents[0].outcome;
  // where apptainer said why: the job's output file, on the node that ran it
  EXPECT_NE(agents[0].outcome.find("the script's output is in /tmp/jenkins/slurm-" +
                                   std::to_string(agents[0].job_id.value_or(0)) + ".out on node n"),
            std::string::npos)
      << agents[0].outcome;
  jenkins_->CancelItem(item);
  ExpectNothingLeft();
}

// The image's Java is checked as the node's is, through `apptainer exec` with the agent's binds:
// here an old Java bound in from the node.
TEST_F(ApptainerAgentIntegrationTest, AnOldJavaInTheImageFailsFastSayingSo) {
  const std::string java = OldJava();
  std::string old = ImageTemplate("oldsif", "oldsif");
  old.replace(old.find("binds: [/tmp/jenkins]"), 21, "binds: [/tmp/jenkins, " + java + "]");
  old.replace(old.find(std::string(standin::kImageAgentDir) + "/java"),
              std::string(standin::kImageAgentDir).size() + 5, java);
  Start(Cloud("tb", 2, old));
  int64_t item = jenkins_->EnqueueFreestyle("old-in-image", "oldsif", 1s);
  std::vector<Agent> agents = AgentsOnceTheFirstFailed(60s);
  std::filesystem::remove(testbed_.root + java);
  ASSERT_FALSE(agents.empty());
  const std::string said = FailedJobOutput(agents[0]);
  EXPECT_NE(
      said.find("slurmfleet: \"" + java + "\" in image " + standin::kStandinAgentImage + " on n"),
      std::string::npos)
      << said;
  EXPECT_NE(said.find(" is Java 11.0.22; the Jenkins agent needs Java 17 or newer: set the "
                      "template's apptainer.javaPath, or use an image with Java 17 or newer"),
            std::string::npos)
      << said;
  jenkins_->CancelItem(item);
  ExpectNothingLeft();
}

}  // namespace
}  // namespace slurmfleet::fleet
