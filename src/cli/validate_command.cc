// `slurmfleet validate --config FILE`: every problem of a configuration at once, each with
// file:line:column, key path, what is wrong and the fix. Exit 0 when clean, kExitConfig otherwise.
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "config/config.h"
#include "spec/resolve.h"

namespace slurmfleet::cli {
namespace {

struct ValidateOptions {
  std::string config_path;
  std::vector<std::string> set_flags;
  bool json = false;
};

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

int RunValidate(const ValidateOptions& options) {
  Result<std::vector<config::Override>> overrides =
      config::CollectOverrides(config::SlurmfleetVariables(environ), options.set_flags);
  if (!overrides) {
    std::cerr << "slurmfleet validate: " << overrides.error().ToString() << "\n";
    return kExitUsage;
  }
  config::LoadResult loaded = config::LoadConfigFile(options.config_path, *overrides);
  if (options.json) {
    nlohmann::json problems = nlohmann::json::array();
    for (const config::Diagnostic& d : loaded.diagnostics) {
      problems.push_back({{"source", d.source},
                          {"line", d.line},
                          {"column", d.column},
                          {"path", d.path},
                          {"message", d.message},
                          {"fix", d.fix}});
    }
    std::cout << nlohmann::json{{"config", options.config_path},
                                {"valid", loaded.ok()},
                                {"problems", problems}}
                     .dump(2)
              << "\n";
    return loaded.ok() ? kExitOk : kExitConfig;
  }
  if (!loaded.ok()) {
    for (const config::Diagnostic& d : loaded.diagnostics) {
      std::cout << config::FormatDiagnostic(d) << "\n";
    }
    std::cout << options.config_path << ": "
              << Plural(loaded.diagnostics.size(), "problem", "problems") << "\n";
    return kExitConfig;
  }
  const config::Config& c = loaded.config;
  std::cout << options.config_path << ": valid\n";
  for (const config::Cloud& cloud : c.clouds) {
    std::cout << "  cloud " << cloud.name << ": " << cloud.slurm_rest_api_url << " (API "
              << cloud.api_version << "), Jenkins " << cloud.jenkins_url << ", "
              << Plural(cloud.job_templates.size(), "template", "templates") << "\n";
    for (const spec::JobTemplate& t : cloud.job_templates) {
      Result<spec::ResolvedTemplate> r = spec::Resolve(cloud.defaults, cloud.job_templates, t.name);
      std::string labels;
      for (const std::string& l : r->labels) labels += (labels.empty() ? "" : " ") + l;
      std::cout << "    " << t.name << ": " << spec::LaunchModeName(r->mode) << " launch"
                << (labels.empty() ? ", no label" : ", labels '" + labels + "'") << "\n";
    }
  }
  if (c.batch) {
    std::cout << "  batch: " << c.batch->rest_url << " (API " << c.batch->api_version
              << "), partition " << c.batch->partition << ", storage " << c.batch->storage_root
              << "\n";
  }
  std::cout << "  daemon: listens on " << c.daemon.listen << ", state in " << c.daemon.state_file
            << "\n";
  return kExitOk;
}

}  // namespace

void AddValidateCommand(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "check a configuration and report every problem with its position and a fix");
  cmd->add_option("--config", options->config_path, "the YAML configuration file")
      ->required()
      ->envname("SLURMFLEET_CONFIG");
  cmd->add_option("--set", options->set_flags,
                  "override a value: PATH=VALUE, e.g. jenkins.clouds.local.maxAgents=4 "
                  "(repeatable; wins over SLURMFLEET_* variables and the file)");
  cmd->add_flag("--json", options->json, "print the problems as JSON");
  cmd->callback([options, &result] { result.exit_code = RunValidate(*options); });
}

}  // namespace slurmfleet::cli
