// `slurmfleet validate --config FILE`: every problem of a configuration at once, each with
// file:line:column, key path, what is wrong and the fix. Exit 0 when clean, kExitConfig otherwise.
// With --connect it then tries what the daemon will use, as the plugin's Test Connection button
// does: each cloud's (and the batch section's) slurmrestd with its credentials, and Jenkins with
// its API token, saying which label mode the account allows. Nothing is created or submitted.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/config_clients.h"
#include "cli/exit_codes.h"
#include "config/config.h"
#include "jenkins/http_client.h"
#include "slurm/curl_transport.h"
#include "slurm/rest_client.h"
#include "spec/resolve.h"

namespace slurmfleet::cli {
namespace {

struct ValidateOptions {
  std::string config_path;
  std::vector<std::string> set_flags;
  bool json = false;
  bool connect = false;
};

// One thing --connect tried: "cloud local", "batch" or "jenkins".
struct Check {
  std::string target;
  std::string address;
  std::optional<Error> error;  // empty when it worked
  std::string detail;          // what was found, or what to know beside the error
};

// A slurmrestd as the daemon reaches it: the transport, the token, the API version, a ping.
Check CheckSlurm(const std::string& target, const std::string& url, const std::string& api_version,
                 bool tls_verify, const std::string& ca_file,
                 const config::SlurmCredentials& credentials) {
  Check check{target, url, std::nullopt, ""};
  slurm::TransportOptions t;
  t.base_url = url;
  t.verify_tls = tls_verify;
  t.ca_file = ca_file;
  t.total_timeout = std::chrono::seconds(15);
  auto transport = slurm::CurlTransport::Create(t);
  if (!transport) {
    check.error = transport.error();
    return check;
  }
  SystemClock clock;
  std::vector<std::string> warnings;
  auto tokens =
      MakeTokenSource(credentials, clock, [&](std::string_view w) { warnings.emplace_back(w); });
  Result<auth::Token> token = tokens->Get();
  if (!token) {
    check.error = token.error();
    return check;
  }
  slurm::RestClientOptions o;
  o.api_version = api_version;
  auto client = slurm::RestClient::Connect(**transport, *tokens, o);
  if (!client) {
    check.error = client.error();
    return check;
  }
  Result<slurm::PingReport> ping = (*client)->Ping();
  if (!ping) {
    check.error = ping.error();
    return check;
  }
  std::string offered;
  for (const std::string& v : ping->offered_versions) offered += (offered.empty() ? "" : ", ") + v;
  check.detail = fmt::format(
      "Slurm {}, cluster {}, controller {} {}; API {} ({}); {}", ping->slurm_release, ping->cluster,
      ping->controller, ping->responding ? "responding" : "NOT responding", ping->api_version,
      offered.empty() ? "pinned" : "auto; offered " + offered, tokens->Describe());
  for (const std::string& w : warnings) check.detail += "; warning: " + w;
  if (!ping->responding) {
    check.error = Error{
        Code::kUnavailable,
        "slurmrestd answers but its slurmctld (" + ping->controller + ") does not respond", "ping"};
  }
  return check;
}

Check CheckJenkins(const config::JenkinsConfig& j) {
  Check check{"jenkins", j.url, std::nullopt, ""};
  auto client = jenkins::HttpClient::Create(JenkinsClientOptions(j));
  if (!client) {
    check.error = client.error();
    return check;
  }
  Result<jenkins::ControllerInfo> info = (*client)->Discover();
  if (!info) {
    check.error = info.error();
    return check;
  }
  Result<std::vector<jenkins::Computer>> nodes = (*client)->Computers();
  if (!nodes) {
    check.error = nodes.error();
    return check;
  }
  Result<std::map<int64_t, std::string>> labels = (*client)->ExactLabels();
  check.detail = fmt::format("Jenkins {}, {} nodes; queue labels {}", info->version, nodes->size(),
                             labels ? "exact, from /scriptText (the account may administer)"
                                    : "from task.labelExpression and the `why` texts (" +
                                          labels.error().message +
                                          "; give the account Overall/Administer for exact "
                                          "Pipeline labels)");
  if (info->quieting_down) check.detail += "; Jenkins is quieting down: no agent is started";
  return check;
}

std::vector<Check> CheckConnections(const config::Config& c) {
  std::vector<Check> checks;
  for (const config::Cloud& cloud : c.clouds) {
    checks.push_back(CheckSlurm("cloud " + cloud.name, cloud.slurm_rest_api_url, cloud.api_version,
                                cloud.tls_verify, cloud.ca_file, cloud.credentials));
  }
  if (c.batch) {
    checks.push_back(CheckSlurm("batch", c.batch->rest_url, c.batch->api_version,
                                c.batch->tls_verify, c.batch->ca_file, c.batch->credentials));
  }
  if (c.jenkins && !c.jenkins->url.empty()) checks.push_back(CheckJenkins(*c.jenkins));
  return checks;
}

// kExitOk when every check worked, else the exit code of the first failure.
int ConnectionsExitCode(const std::vector<Check>& checks) {
  for (const Check& c : checks) {
    if (c.error) return ExitCodeFor(*c.error);
  }
  return kExitOk;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The agentLaunch keys a template (or a template it inherits from) sets although its launch is
// not native, as one sentence; empty when none. The cloud's defaultAgentLaunch is left out: a
// cloud of mixed templates sets it for its native ones.
std::string IgnoredNativeKeys(const config::Cloud& cloud, const std::string& name,
                              spec::LaunchMode mode) {
  if (mode == spec::LaunchMode::kNative) return "";
  Result<spec::JobTemplate> own = spec::ResolveInheritance(cloud.job_templates, name);
  if (!own) return "";
  std::string keys;
  auto note = [&keys](bool set, std::string_view key) {
    if (set) keys += (keys.empty() ? "agentLaunch." : ", agentLaunch.") + std::string(key);
  };
  note(own->agent.java_path.has_value(), "javaPath");
  note(own->agent.jar_path.has_value(), "jarPath");
  note(own->agent.download_jar.has_value(), "downloadJar");
  note(own->agent.setup_script.has_value(), "setupScript");
  if (keys.empty()) return "";
  return keys + " apply to native launch only; this template's " +
         std::string(spec::LaunchModeName(mode)) + " launch ignores them";
}

// Something a valid configuration does that is most likely not what was meant.
struct Warning {
  std::string message;  // no trailing period
  std::string fix;      // may be empty when the message says it
};

// The warnings of one template of a valid configuration.
std::vector<Warning> TemplateWarnings(const config::Cloud& cloud, const std::string& name,
                                      const spec::ResolvedTemplate& r) {
  std::vector<Warning> out;
  if (r.labels.empty() && r.node_usage_mode == spec::NodeUsageMode::kExclusive) {
    // an EXCLUSIVE node takes only builds whose label it has: with none, nothing
    out.push_back({"with no label and nodeUsageMode EXCLUSIVE this template serves no build",
                   "give it a label, or set nodeUsageMode: NORMAL"});
  }
  if (std::string ignored = IgnoredNativeKeys(cloud, name, r.mode); !ignored.empty()) {
    if (r.mode == spec::LaunchMode::kApptainer) {
      ignored += " (inside the image: apptainer.javaPath and apptainer.jarPath)";
    }
    out.push_back({std::move(ignored), ""});
  }
  return out;
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
    // Shaped as problems are; a warning is known once the templates resolve, without a position.
    nlohmann::json warnings = nlohmann::json::array();
    if (loaded.ok()) {
      for (size_t i = 0; i < loaded.config.clouds.size(); ++i) {
        const config::Cloud& cloud = loaded.config.clouds[i];
        for (size_t j = 0; j < cloud.job_templates.size(); ++j) {
          const std::string& name = cloud.job_templates[j].name;
          Result<spec::ResolvedTemplate> r =
              spec::Resolve(cloud.defaults, cloud.job_templates, name);
          for (const Warning& w : TemplateWarnings(cloud, name, *r)) {
            warnings.push_back({{"source", options.config_path},
                                {"line", 0},
                                {"column", 0},
                                {"path", "jenkins.clouds[" + std::to_string(i) +
                                             "].slurm.jobTemplates[" + std::to_string(j) + "]"},
                                {"message", w.message},
                                {"fix", w.fix}});
          }
        }
      }
    }
    nlohmann::json out = {{"config", options.config_path},
                          {"valid", loaded.ok()},
                          {"problems", problems},
                          {"warnings", warnings}};
    if (!loaded.ok() || !options.connect) {
      std::cout << out.dump(2) << "\n";
      return loaded.ok() ? kExitOk : kExitConfig;
    }
    std::vector<Check> checks = CheckConnections(loaded.config);
    out["connections"] = nlohmann::json::array();
    for (const Check& c : checks) {
      out["connections"].push_back({{"target", c.target},
                                    {"address", c.address},
                                    {"ok", !c.error},
                                    {"detail", c.detail},
                                    {"error", c.error ? c.error->ToString() : ""}});
    }
    std::cout << out.dump(2) << "\n";
    return ConnectionsExitCode(checks);
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
      for (const Warning& w : TemplateWarnings(cloud, t.name, *r)) {
        std::cout << "      warning: " << w.message << (w.fix.empty() ? "" : "; " + w.fix) << "\n";
      }
    }
  }
  if (c.batch) {
    std::cout << "  batch: " << c.batch->rest_url << " (API " << c.batch->api_version
              << "), partition " << c.batch->partition << ", storage " << c.batch->storage_root
              << "\n";
  }
  std::cout << "  daemon: listens on " << c.daemon.listen << ", state in " << c.daemon.state_file
            << "\n";
  if (!options.connect) return kExitOk;
  std::vector<Check> checks = CheckConnections(c);
  std::cout << "connections:\n";
  for (const Check& check : checks) {
    std::cout << "  " << check.target << " (" << check.address << "): "
              << (check.error ? "FAILED: " + check.error->ToString() : "ok: " + check.detail)
              << "\n";
  }
  return ConnectionsExitCode(checks);
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
  cmd->add_flag("--connect", options->connect,
                "then try each slurmrestd and Jenkins with the configured credentials (nothing is "
                "created or submitted)");
  cmd->callback([options, &result] { result.exit_code = RunValidate(*options); });
}

}  // namespace slurmfleet::cli
