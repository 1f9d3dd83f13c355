// The Java check runs in bash here against stand-in `java` commands that print what real JVMs
// print for `-version` (on stderr, after any "Picked up ..." line).
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

  // Runs the check as the agent script does (bash, set -eo pipefail), then `echo started`.
  CommandRun Check(const std::string& java, int minimum) {
    const std::string script = dir_ + "/check.sh";
    std::ofstream(script) << "set -eo pipefail\n"
                          << JavaVersionCheck(ShellQuote(java), minimum) << "echo started\n";
    return RunCommand("SLURMD_NODENAME=node7 bash " + script + " 2>&1");
  }

  std::string dir_;
};

std::string OpenJdk(const std::string& version) {
  return "openjdk version \"" + version + "\" 2024-10-15\nOpenJDK Runtime Environment (build)\n" +
         "OpenJDK 64-Bit Server VM (build, mixed mode, sharing)";
}

TEST_F(JavaCheckTest, JavaAtOrAboveTheMinimumStartsTheAgent) {
  for (const char* v : {"17.0.13", "17", "21.0.5", "21-ea", "25.0.1", "100.0.0"}) {
    CommandRun ran = Check(FakeJava("java", OpenJdk(v)), 17);
    EXPECT_EQ(ran.exit_code, 0) << v << ": " << ran.out;
    EXPECT_EQ(ran.out, "started\n") << v;
  }
}

TEST_F(JavaCheckTest, OracleStyleAndPickedUpLinesAreRead) {
  const std::string java = FakeJava(
      "java", "Picked up JAVA_TOOL_OPTIONS: -Xmx2g\njava version \"21.0.2\" 2024-01-16 LTS\n");
  EXPECT_EQ(Check(java, 21).out, "started\n");
}

TEST_F(JavaCheckTest, AnOlderJavaEndsTheJobNamingItsVersionAndTheFix) {
  for (const char* v : {"1.8.0_392", "11.0.22", "16"}) {
    const std::string java = FakeJava("java", OpenJdk(v));
    CommandRun ran = Check(java, 17);
    EXPECT_EQ(ran.exit_code, 1) << v;
    EXPECT_EQ(ran.out, "slurmfleet: '" + java + "' on node7 is Java " + v +
                           "; the Jenkins agent needs Java 17 or newer: set the template's "
                           "javaPath, or load a newer Java in its setupScript\n");
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
  CommandRun ran = Check(dir_ + "/no-such-java", 17);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("slurmfleet: cannot tell the version of Java '" + dir_ +
                         "/no-such-java' on node7 ("),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("No such file or directory): set the template's javaPath"),
            std::string::npos)
      << ran.out;
  EXPECT_EQ(ran.out.find("started"), std::string::npos);
}

TEST_F(JavaCheckTest, AnAnswerWithoutAVersionEndsTheJobQuotingItsFirstLine) {
  CommandRun ran = Check(FakeJava("java", "Error: could not open `jvm.cfg'\nmore", 1), 17);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("(Error: could not open `jvm.cfg'): set the template's javaPath"),
            std::string::npos)
      << ran.out;
}

TEST_F(JavaCheckTest, APathWithQuotesAndSpacesIsRunAsIs) {
  const std::string java = FakeJava("it's a java", OpenJdk("21.0.1"));
  EXPECT_EQ(Check(java, 17).out, "started\n");
}

}  // namespace
}  // namespace slurmfleet::launch
