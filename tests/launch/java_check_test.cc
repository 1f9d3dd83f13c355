// The Java check runs here in bash and in dash (a container's /bin/sh) against stand-in `java`
// commands that print what real JVMs print for `-version` (on stderr, after any "Picked up ..."
// line): on the node, through a stand-in `apptainer exec`, and inside a single-quoted string as
// the Pyxis script runs it.
#include "launch/java_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "launch/shell_quote.h"
#include "support/run_command.h"

namespace slurmfleet::launch {
namespace {

class JavaCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/slurmfleet-java-check-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A `java` whose -version prints `says` on stderr and exits `code`.
  std::string FakeJava(const std::string& name, const std::string& says, int code = 0) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\ncat >&2 <<'EOF'\n" << says << "\nEOF\nexit " << code << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }

  // Runs the check as the agent script does (bash, set -eo pipefail), then `echo started`; with
  // `shell` "dash", as a container's /bin/sh would.
  CommandRun Check(const std::string& java, int minimum, const std::string& shell = "bash") {
    const std::string script = dir_ + "/check.sh";
    std::ofstream(script) << (shell == "bash" ? "set -eo pipefail\n" : "set -e\n")
                          << JavaVersionCheck({ShellQuote(java)}, minimum) << "echo started\n";
    return RunCommand("SLURMD_NODENAME=node7 " + shell + " " + script + " 2>&1");
  }

  // The check of `java` in an image, through a stand-in `apptainer exec [--bind B]... IMAGE CMD...`
  // that runs CMD here and notes its arguments in apptainer.args.
  CommandRun CheckInImage(const std::string& java, int minimum) {
    std::ofstream(dir_ + "/apptainer")
        << "#!/bin/sh\necho \"$@\" > " << dir_ << "/apptainer.args\nshift\n"
        << "while [ \"$1\" = --bind ]; do shift 2; done\nshift\nexec \"$@\"\n";
    ::chmod((dir_ + "/apptainer").c_str(), 0755);
    const std::string script = dir_ + "/check.sh";
    std::ofstream(script) << "set -eo pipefail\n"
                          << JavaVersionCheck(
                                 {ShellQuote(java), JavaSite::kApptainer,
                                  ShellQuote("/images/agent.sif"),
                                  "apptainer exec --bind /data " + ShellQuote("/images/agent.sif")},
                                 minimum)
                          << "echo started\n";
    return RunCommand("PATH=" + dir_ + ":$PATH SLURMD_NODENAME=node7 bash " + script + " 2>&1");
  }

  // As the Pyxis script runs it: inside a single-quoted string, in the container's /bin/sh
  // (dash here), with the Java as the first argument.
  CommandRun CheckInContainer(const std::string& java, int minimum) {
    const std::string check = JavaVersionCheck({"\"$1\"", JavaSite::kPyxis}, minimum);
    EXPECT_EQ(check.find('\''), std::string::npos) << check;
    const std::string script = dir_ + "/check.sh";
    std::ofstream(script) << "in_container='" << check << "echo started'\n"
                          << "dash -c \"$in_container\" slurmfleet-agent " << ShellQuote(java)
                          << " -jar agent.jar\n";
    return RunCommand("SLURMD_NODENAME=node7 bash " + script + " 2>&1");
  }

  std::string dir_;
};

std::string OpenJdk(const std::string& version) {
  return "openjdk version \"" + version + "\" 2024-10-15\nOpenJDK Runtime Environment (build)\n" +
         "OpenJDK 64-Bit Server VM (build, mixed mode, sharing)";
}

TEST_F(JavaCheckTest, JavaAtOrAboveTheMinimumStartsTheAgent) {
  for (const char* shell : {"bash", "dash"}) {
    for (const char* v : {"17.0.13", "17", "21.0.5", "21-ea", "25.0.1", "100.0.0"}) {
      CommandRun ran = Check(FakeJava("java", OpenJdk(v)), 17, shell);
      EXPECT_EQ(ran.exit_code, 0) << shell << " " << v << ": " << ran.out;
      EXPECT_EQ(ran.out, "started\n") << shell << " " << v;
    }
  }
}

TEST_F(JavaCheckTest, OracleStyleAndPickedUpLinesAreRead) {
  const std::string java = FakeJava(
      "java", "Picked up JAVA_TOOL_OPTIONS: -Xmx2g\njava version \"21.0.2\" 2024-01-16 LTS\n");
  EXPECT_EQ(Check(java, 21).out, "started\n");
}

TEST_F(JavaCheckTest, AnOlderJavaEndsTheJobNamingItsVersionAndTheFix) {
  for (const char* shell : {"bash", "dash"}) {
    for (const char* v : {"1.8.0_392", "11.0.22", "16"}) {
      const std::string java = FakeJava("java", OpenJdk(v));
      CommandRun ran = Check(java, 17, shell);
      EXPECT_EQ(ran.exit_code, 1) << shell << " " << v;
      EXPECT_EQ(ran.out, "slurmfleet: \"" + java + "\" on node7 is Java " + v +
                             "; the Jenkins agent needs Java 17 or newer: set the template's "
                             "javaPath, or load a newer Java in its setupScript\n")
          << shell;
    }
  }
}

TEST_F(JavaCheckTest, TheMinimumIsTheControllers) {
  const std::string java = FakeJava("java", OpenJdk("17.0.13"));
  CommandRun ran = Check(java, 21);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("is Java 17.0.13; the Jenkins agent needs Java 21 or newer"),
            std::string::npos)
      << ran.out;
}

TEST_F(JavaCheckTest, AMissingJavaEndsTheJobWithWhatTheShellSaid) {
  for (const char* shell : {"bash", "dash"}) {
    CommandRun ran = Check(dir_ + "/no-such-java", 17, shell);
    EXPECT_EQ(ran.exit_code, 1) << shell;
    EXPECT_NE(ran.out.find("slurmfleet: cannot tell the version of Java \"" + dir_ +
                           "/no-such-java\" on node7 ("),
              std::string::npos)
        << shell << ": " << ran.out;
    // bash says "No such file or directory", dash "not found"
    EXPECT_TRUE(ran.out.find("No such file or directory): set the template's javaPath") !=
                    std::string::npos ||
                ran.out.find("not found): set the template's javaPath") != std::string::npos)
        << shell << ": " << ran.out;
    EXPECT_EQ(ran.out.find("started"), std::string::npos) << shell;
  }
}

TEST_F(JavaCheckTest, AnAnswerWithoutAVersionEndsTheJobQuotingItsFirstLine) {
  for (const char* shell : {"bash", "dash"}) {
    CommandRun ran = Check(FakeJava("java", "Error: could not open `jvm.cfg'\nmore", 1), 17, shell);
    EXPECT_EQ(ran.exit_code, 1) << shell;
    EXPECT_NE(ran.out.find("(Error: could not open `jvm.cfg'): set the template's javaPath"),
              std::string::npos)
        << shell << ": " << ran.out;
  }
}

TEST_F(JavaCheckTest, AnImagesJavaIsAskedThroughApptainerWithTheAgentsBinds) {
  CommandRun ran = CheckInImage(FakeJava("java", OpenJdk("21.0.5")), 21);
  EXPECT_EQ(ran.out, "started\n");
  std::ifstream args(dir_ + "/apptainer.args");
  std::string line;
  std::getline(args, line);
  EXPECT_EQ(line, "exec --bind /data /images/agent.sif " + dir_ + "/java -version");

  const std::string old = FakeJava("java11", OpenJdk("11.0.22"));
  ran = CheckInImage(old, 17);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_EQ(ran.out, "slurmfleet: \"" + old +
                         "\" in image /images/agent.sif on node7 is Java 11.0.22; the Jenkins "
                         "agent needs Java 17 or newer: set the template's apptainer.javaPath, or "
                         "use an image with Java 17 or newer\n");
}

TEST_F(JavaCheckTest, AnImageWithoutThatJavaEndsTheJobWithWhatApptainerSaid) {
  CommandRun ran = CheckInImage(dir_ + "/no-such-java", 17);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("in image /images/agent.sif on node7 ("), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("): set the template's apptainer.javaPath to the image's Java\n"),
            std::string::npos)
      << ran.out;
}

TEST_F(JavaCheckTest, InsideAPyxisContainerTheFirstArgumentIsChecked) {
  CommandRun ran = CheckInContainer(FakeJava("java", OpenJdk("17.0.13")), 17);
  EXPECT_EQ(ran.out, "started\n");

  const std::string old = FakeJava("java8", OpenJdk("1.8.0_392"));
  ran = CheckInContainer(old, 17);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_EQ(ran.out, "slurmfleet: \"" + old +
                         "\" in the container image on node7 is Java 1.8.0_392; the Jenkins "
                         "agent needs Java 17 or newer: use a pyxis.containerImage with Java 17 "
                         "or newer\n");

  ran = CheckInContainer(dir_ + "/no-such-java", 17);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("): the image must hold Java at that path (the jenkins/inbound-agent "
                         "layout): set pyxis.containerImage\n"),
            std::string::npos)
      << ran.out;
}

TEST_F(JavaCheckTest, APathWithQuotesAndSpacesIsRunAsIs) {
  const std::string java = FakeJava("it's a java", OpenJdk("21.0.1"));
  EXPECT_EQ(Check(java, 17).out, "started\n");
}

}  // namespace
}  // namespace slurmfleet::launch
