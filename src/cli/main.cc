// slurmfleet: the command-line front end. Each subcommand lives in its own file and registers
// itself here; exit codes are shared (cli/exit_codes.h).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "server/version.h"

int main(int argc, char** argv) {
  CLI::App app{
      "slurmfleet: a control plane for Jenkins agents and batch runs on Slurm, via slurmrestd"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(slurmfleet::server::kSlurmfleetVersion));

  slurmfleet::cli::CommandResult result;
  slurmfleet::cli::RegisterCommands(app, result);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : slurmfleet::cli::kExitUsage;
  }
  return result.exit_code;
}
