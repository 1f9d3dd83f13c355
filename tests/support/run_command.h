// Runs a command line through the shell, as a user would type it, for tests of the slurmfleet
// binary: what it printed on stdout and how it exited (stderr goes to the test's own log).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace slurmfleet {

struct CommandRun {
  int exit_code = -1;  // -1: not run, or ended by a signal
  std::string out;
};

inline CommandRun RunCommand(const std::string& command_line) {
  CommandRun ran;
  FILE* pipe = ::popen(command_line.c_str(), "r");
  if (pipe == nullptr) return ran;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) ran.out.append(buf, n);
  const int status = ::pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

}  // namespace slurmfleet
