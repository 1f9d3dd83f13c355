// Flags that are refused before anything is sent: the slurmfleet binary as a process, with a
// slurmrestd URL nothing listens on, so that a flag let through would show as exit 5.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/run_command.h"

namespace slurmfleet {
namespace {

CommandRun Slurmfleet(const std::string& args) {
  return RunCommand("env -u SLURM_JWT SLURMFLEET_TOKEN_FILE=/dev/null " SLURMFLEET_BINARY " " +
                    args + " 2>&1");
}

constexpr const char* kNowhere = "--url http://127.0.0.1:1";

TEST(CommandFlagsTest, TimeoutsAreFiniteAndPositive) {
  for (const std::string flag : {"--timeout -1", "--timeout 0", "--timeout nan", "--timeout 1e308",
                                 "--timeout inf", "--connect-timeout -5", "--connect-timeout x"}) {
    CommandRun r = Slurmfleet(std::string("ping ") + kNowhere + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.out;
    EXPECT_NE(r.out.find("a number of seconds from 0.001 to"), std::string::npos)
        << flag << ": " << r.out;
  }
}

TEST(CommandFlagsTest, AFollowTimeoutIsCheckedBeforeTheJobIsSubmitted) {
  const std::string script = ::testing::TempDir() + "/flags-test.sh";
  std::ofstream(script) << "#!/bin/sh\ntrue\n";
  CommandRun r = Slurmfleet("jobs submit " + std::string(kNowhere) + " --script " + script +
                            " --cwd /tmp --follow --follow-timeout -1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--follow-timeout"), std::string::npos) << r.out;
}

TEST(CommandFlagsTest, AJobWithoutAWorkingDirectoryIsRefusedHere) {
  const std::string script = ::testing::TempDir() + "/flags-test.sh";
  std::ofstream(script) << "#!/bin/sh\ntrue\n";
  CommandRun r = Slurmfleet("jobs submit " + std::string(kNowhere) + " --script " + script);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--cwd: the job needs a working directory on the cluster"),
            std::string::npos)
      << r.out;
  // given in the job_desc instead, it gets as far as slurmrestd (which does not answer here)
  r = Slurmfleet("jobs submit " + std::string(kNowhere) + " --script " + script +
                 " --job '{\"current_working_directory\": \"/tmp\"}'");
  EXPECT_EQ(r.out.find("--cwd"), std::string::npos) << r.out;
}

TEST(CommandFlagsTest, AnEmptyScriptIsRefusedHere) {
  const std::string script = ::testing::TempDir() + "/flags-test-empty.sh";
  std::ofstream(script) << " \n";
  CommandRun r =
      Slurmfleet("jobs submit " + std::string(kNowhere) + " --cwd /tmp --script " + script);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--script: " + script + " is empty; write the job's batch script in it"),
            std::string::npos)
      << r.out;
}

TEST(CommandFlagsTest, AnEmptyOrUnknownSignalIsNoCancel) {
  for (const std::string signal : {"''", "SIGFOO", "-9", "99", "0"}) {
    CommandRun r = Slurmfleet("jobs cancel 12 " + std::string(kNowhere) + " --signal " + signal);
    EXPECT_EQ(r.exit_code, 2) << signal << ": " << r.out;
    EXPECT_NE(r.out.find("is not a signal"), std::string::npos) << signal << ": " << r.out;
  }
  for (const std::string signal : {"TERM", "SIGUSR1", "kill", "9"}) {
    CommandRun r = Slurmfleet("jobs cancel 12 " + std::string(kNowhere) + " --signal " + signal);
    EXPECT_EQ(r.out.find("is not a signal"), std::string::npos) << signal << ": " << r.out;
    EXPECT_NE(r.exit_code, 2) << signal << ": " << r.out;
  }
}

TEST(CommandFlagsTest, ASequenceIsAWholeNumberThatFits) {
  for (const std::string sequence : {"-1", "18446744073709551616", "1.5"}) {
    CommandRun r = Slurmfleet("render --sequence " + sequence);
    EXPECT_EQ(r.exit_code, 2) << sequence << ": " << r.out;
    EXPECT_NE(r.out.find("--sequence"), std::string::npos) << sequence << ": " << r.out;
  }
}

}  // namespace
}  // namespace slurmfleet
