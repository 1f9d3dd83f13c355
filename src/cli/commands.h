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
void AddValidateCommand(CLI::App& app, CommandResult& result);
void AddRenderCommand(CLI::App& app, CommandResult& result);
void AddServeCommand(CLI::App& app, CommandResult& result);
void AddAgentsCommand(CLI::App& app, CommandResult& result);  // agents and activities

inline void RegisterCommands(CLI::App& app, CommandResult& result) {
  AddPingCommand(app, result);
  AddJobsCommand(app, result);
  AddValidateCommand(app, result);
  AddRenderCommand(app, result);
  AddServeCommand(app, result);
  AddAgentsCommand(app, result);
}

}  // namespace slurmfleet::cli
