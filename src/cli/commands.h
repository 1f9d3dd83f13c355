// Registration of every subcommand. Each Add*Command lives in its own file (ping_command.cc,
// jobs_command.cc, ...) and stores its exit code in `result` when it runs.
#pragma once

#include <CLI/CLI.hpp>

namespace slurmfleet::cli {

struct CommandResult {
  int exit_code = 0;
};

void AddPingCommand(CLI::App& app, CommandResult& result);
void AddJobsCommand(CLI::App& app, CommandResult& result);

inline void RegisterCommands(CLI::App& app, CommandResult& result) {
  AddPingCommand(app, result);
  AddJobsCommand(app, result);
}

}  // namespace slurmfleet::cli
