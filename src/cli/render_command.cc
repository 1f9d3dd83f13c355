// `slurmfleet render --config FILE --template NAME [--json '{...}'] [--api-version V]`: the exact
// batch script and job/submit body an agent of that template would get, secrets redacted.
// Nothing is submitted and nothing is contacted.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "config/config.h"
#include "launch/agent_name.h"
#include "launch/render.h"
#include "slurm/dialect.h"
#include "spec/inline_json.h"
#include "spec/resolve.h"
#include "spec/suggest.h"

namespace slurmfleet::cli {
namespace {

// The latest --timestamp-ms the clock can hold (2262-04-11, in 64-bit nanoseconds): a later one
// would overflow into a negative agent name.
constexpr int64_t kMaxTimestampMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::duration::max())
                                        .count();

struct RenderOptions {
  std::string config_path;
  std::string cloud;
  std::string template_name;
  std::string json;
  std::string api_version;
  std::vector<std::string> set_flags;
  int64_t timestamp_ms = -1;  // -1: now
  uint64_t sequence = 1;
  std::string output = "all";
};

int Failed(const Error& e) {
  std::cerr << "slurmfleet render: " << e.ToString() << "\n";
  return ExitCodeFor(e);
}

int RunRender(const RenderOptions& o) {
  Result<std::vector<config::Override>> overrides =
      config::CollectOverrides(config::SlurmfleetVariables(environ), o.set_flags);
  if (!overrides) return Failed(overrides.error());
  Result<config::Config> cfg = config::LoadConfig(o.config_path, *overrides);
  if (!cfg) return Failed(cfg.error());

  const config::Cloud* cloud = nullptr;
  if (!o.cloud.empty()) {
    cloud = cfg->FindCloud(o.cloud);
    if (cloud == nullptr) {
      return Failed(Error{Code::kInvalidInput, "no cloud named '" + o.cloud + "'", "--cloud"});
    }
  } else if (cfg->clouds.size() == 1) {
    cloud = &cfg->clouds.front();
  } else {
    return Failed(Error{Code::kInvalidInput,
                        "the configuration has " + std::to_string(cfg->clouds.size()) +
                            " clouds; choose one with --cloud",
                        "--cloud"});
  }

  const std::vector<spec::JobTemplate>& templates = cloud->job_templates;
  if (std::none_of(templates.begin(), templates.end(),
                   [&](const spec::JobTemplate& t) { return t.name == o.template_name; })) {
    std::vector<std::string_view> names;
    std::string known;
    for (const spec::JobTemplate& t : templates) {
      names.push_back(t.name);
      known += (known.empty() ? "" : ", ") + t.name;
    }
    return Failed(Error{Code::kInvalidInput,
                        "no job template named '" + o.template_name + "' in cloud '" + cloud->name +
                            "'" + spec::DidYouMean(o.template_name, names) +
                            "; its templates: " + (known.empty() ? "none" : known),
                        "--template"});
  }

  // The version the job is rendered for: the flag, else the cloud's pinned version, else the
  // newest we speak (what `auto` picks from a current slurmrestd).
  std::string version = o.api_version;
  if (version.empty() && cloud->api_version != config::kAutoApiVersion) {
    version = cloud->api_version;
  }
  if (version.empty()) version = std::string(slurm::AllDialects().front().version);
  const spec::JobDescSchema* schema = spec::FindJobDescSchema(version);
  if (schema == nullptr || slurm::FindDialect(version) == nullptr) {
    return Failed(Error{Code::kInvalidInput,
                        "'" + version + "' is not an API version slurmfleet speaks; use one of " +
                            slurm::SupportedVersions(),
                        "--api-version"});
  }

  std::optional<spec::JobTemplate> pipeline;
  if (!o.json.empty()) {
    const spec::JobDescSchema* schemas[] = {schema};
    Result<spec::JobTemplate> layer = spec::ParseInlineJson(o.json, schemas);
    if (!layer) return Failed(layer.error());
    pipeline = *std::move(layer);
  }
  Result<spec::ResolvedTemplate> tmpl = spec::Resolve(
      cloud->defaults, cloud->job_templates, o.template_name, pipeline ? &*pipeline : nullptr);
  if (!tmpl) return Failed(tmpl.error());

  const auto at =
      o.timestamp_ms >= 0
          ? std::chrono::system_clock::time_point(std::chrono::milliseconds(o.timestamp_ms))
          : std::chrono::system_clock::now();
  Result<std::string> agent = launch::MakeAgentName(cloud->name, tmpl->name, at, o.sequence);
  if (!agent) return Failed(agent.error());

  launch::LaunchContext context{
      cloud->name, *agent, cloud->jenkins_url, version, Secret("rendered-without-a-secret"),
      o.sequence};
  Result<launch::RenderedJob> job = launch::Render(*tmpl, context);
  if (!job) return Failed(job.error());
  Result<nlohmann::json> body = launch::SubmitBody(*job, /*redact_secrets=*/true);
  if (!body) return Failed(body.error());

  if (o.output == "script") {
    std::cout << job->request.script;
    return kExitOk;
  }
  if (o.output == "body") {
    std::cout << body->dump(2) << "\n";
    return kExitOk;
  }
  const slurm::Dialect* dialect = slurm::FindDialect(version);
  std::cout << "# agent " << *agent << " (cloud " << cloud->name << ", template " << tmpl->name
            << ", " << spec::LaunchModeName(tmpl->mode) << " launch)\n";
  std::cout << "# Jenkins node: remoteFS " << job->remote_fs << "\n";
  std::cout << "# ---- batch script ----\n" << job->request.script;
  std::cout << "# ---- POST " << dialect->Path("/job/submit") << " (secrets redacted) ----\n"
            << body->dump(2) << "\n";
  return kExitOk;
}

}  // namespace

void AddRenderCommand(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<RenderOptions>();
  CLI::App* cmd = app.add_subcommand(
      "render", "print the batch script and job request an agent would get (nothing is submitted)");
  cmd->add_option("--config", o->config_path, "the YAML configuration file")
      ->required()
      ->envname("SLURMFLEET_CONFIG");
  cmd->add_option("--template", o->template_name, "the job template to render")->required();
  cmd->add_option("--cloud", o->cloud, "the cloud (needed when the file has several)");
  cmd->add_option("--json", o->json,
                  "pipeline JSON layered over the template: '{\"job\":{...},\"pyxis\":{...},"
                  "\"agent\":{...}}'");
  cmd->add_option("--api-version", o->api_version,
                  "render for this slurmrestd API version (default: the cloud's, else the newest)");
  cmd->add_option("--set", o->set_flags, "override a configuration value: PATH=VALUE (repeatable)");
  cmd->add_option("--timestamp-ms", o->timestamp_ms,
                  "the agent name's timestamp in Unix milliseconds, up to 2262-04-11 (default: "
                  "now)")
      ->check(CLI::Range(int64_t{0}, kMaxTimestampMs));
  cmd->add_option("--sequence", o->sequence, "the agent name's sequence number and agent index")
      ->capture_default_str()
      ->check(CLI::Validator(
          // CLI11 reads "-1" into an unsigned number as its largest value.
          [](std::string& text) -> std::string {
            uint64_t value = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
              return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
            }
            return {};
          },
          "N"));
  cmd->add_option("--output", o->output, "what to print")
      ->check(CLI::IsMember({"all", "script", "body"}))
      ->capture_default_str();
  cmd->callback([o, &result] { result.exit_code = RunRender(*o); });
}

}  // namespace slurmfleet::cli
