#include "fleet/service.h"

#include <map>

#include "slurm/dialect.h"
#include "spec/job_desc_schema.h"

namespace slurmfleet::fleet {

Service::Service(store::Store& store, std::vector<CloudRuntime> clouds, Provisioning provisioning)
    : store_(store), clouds_(std::move(clouds)), provisioning_(std::move(provisioning)) {}

Service::~Service() { Stop(); }

void Service::Start() {
  for (CloudRuntime& c : clouds_) {
    Engine* engine = c.engine.get();
    threads_.emplace_back([engine] { engine->Run(); });
  }
  if (Provisioner* p = provisioning_.provisioner.get()) {
    provisioner_thread_ = std::thread([p] { p->Run(); });
  }
  ready_ = true;
}

void Service::Drain() { ready_ = false; }

void Service::Stop() {
  ready_ = false;
  // The provisioner ends first: a wave it is sending (Engine::SubmitNow) then has its outcomes
  // with the engines before they stop.
  if (provisioning_.provisioner) provisioning_.provisioner->Stop();
  if (provisioner_thread_.joinable()) provisioner_thread_.join();
  for (CloudRuntime& c : clouds_) c.engine->Stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

CloudRuntime* Service::Find(const std::string& cloud) {
  for (CloudRuntime& c : clouds_) {
    if (c.name == cloud) return &c;
  }
  return nullptr;
}

std::vector<server::CloudInfo> Service::Clouds() {
  // The cap in force is the registry's, which SIGHUP replaces; the runtime keeps the start-up one.
  std::map<std::string, int> caps;
  if (provisioning_.templates) {
    for (const CloudTemplates& t : provisioning_.templates->Snapshot()) caps[t.name] = t.max_agents;
  }
  std::vector<server::CloudInfo> out;
  for (const CloudRuntime& c : clouds_) {
    auto cap = caps.find(c.name);
    out.push_back({c.name, c.slurm_url, c.api_version,
                   cap != caps.end() ? cap->second : c.max_agents,
                   static_cast<int>(c.engine->active_count())});
  }
  return out;
}

Result<server::ConnectionReport> Service::TestConnection(const std::string& cloud) {
  CloudRuntime* c = Find(cloud);
  if (!c) return Fail(Code::kNotFound, "no cloud named '" + cloud + "'", "cloud");
  server::ConnectionReport report;
  report.token_source = c->tokens->Describe();
  Result<auth::Token> token = c->tokens->Get();
  if (token) report.token_user = token->user;
  Result<slurm::RestClient*> client = c->client->Connected();
  if (!client) {
    report.message = client.error().ToString();
    return report;
  }
  Result<slurm::PingReport> ping = (*client)->Ping();
  report.api_version = std::string((*client)->api_version());
  report.offered_versions = (*client)->offered_versions();
  if (!ping) {
    report.message = ping.error().ToString();
    return report;
  }
  report.ok = true;
  report.slurm_release = ping->slurm_release;
  report.cluster = ping->cluster;
  return report;
}

Result<store::Submission> Service::Submit(const server::SubmitCommand& command) {
  CloudRuntime* c = Find(command.cloud.empty() ? std::string(kBatchCloud) : command.cloud);
  if (!c) {
    std::string known;
    for (const CloudRuntime& r : clouds_) known += (known.empty() ? "" : ", ") + r.name;
    if (!command.cloud.empty()) {
      return Fail(Code::kNotFound, "no cloud named '" + command.cloud + "'; configured: " + known,
                  "cloud");
    }
    return Fail(Code::kInvalidInput,
                "missing; name a cloud (configured: " + known +
                    "), or add a batch section to the configuration for runs without one",
                "cloud");
  }
  Result<slurm::JobRequest> request = slurm::JobRequestFromJobDesc(command.job, "job");
  if (!request) return std::unexpected(request.error());
  if (Status checked =
          spec::CheckJobDescFields(request->extra_fields, c->client->api_version(), "job");
      !checked) {
    return std::unexpected(checked.error());
  }
  if (request->script.empty()) {
    return Fail(Code::kInvalidInput, "a batch script is required; put it in job.script",
                "job.script");
  }
  if (!request->script.starts_with("#!")) {
    return Fail(Code::kInvalidInput,
                "the script must start with an interpreter line such as #!/bin/bash", "job.script");
  }
  if (request->partition.empty()) request->partition = c->default_partition;
  // Slurm requires an environment and the job sees only what is sent
  if (request->environment.empty())
    request->environment.push_back({"PATH", "/usr/local/bin:/usr/bin:/bin", false});
  return c->engine->AddIntent(command.key, command.kind.empty() ? "job" : command.kind,
                              command.owner, *request);
}

Status Service::Cancel(const std::string& key) {
  Result<store::Submission> s = store_.Get(key);
  if (!s) return std::unexpected(s.error());
  // as the engine answers it: nothing is left to cancel, wherever the job ran
  if (store::IsTerminal(s->phase) || s->cancel_requested) return {};
  CloudRuntime* c = Find(s->cloud);
  if (!c) {
    return Fail(Code::kConflict,
                "submission '" + key + "' belongs to cloud '" + s->cloud +
                    "', which is no longer configured",
                "key");
  }
  return c->engine->RequestCancel(key);
}

}  // namespace slurmfleet::fleet

namespace slurmfleet::fleet {
namespace {

server::TemplateView EphemeralView(const EphemeralInfo& e) {
  return {e.name, e.label, e.cloud, true, e.owner, e.expires_at};
}

Error NotProvisioning() {
  return Error{Code::kUnavailable,
               "agent provisioning is off: set jenkins.url and jenkins.credentials in the "
               "configuration",
               "jenkins.url"};
}

}  // namespace

std::vector<server::AgentView> Service::Agents(bool include_ended, size_t limit) {
  std::vector<server::AgentView> out;
  Result<std::vector<store::Record>> records =
      store_.ListRecords(std::string(kAgentRecord), !include_ended);
  if (!records) return out;
  for (auto it = records->rbegin(); it != records->rend(); ++it) {
    if (limit > 0 && out.size() >= limit) break;
    Result<Agent> a = FromRecord(*it);
    if (!a) continue;
    // The submission holds the job's last state; an ended agent's own copy stops at its end.
    if (Result<store::Submission> sub = store_.Get(a->name); sub) {
      if (sub->job_id) a->job_id = sub->job_id;
      a->slurm_state = sub->slurm_state;
      a->state_reason = sub->state_reason;
    }
    out.push_back({a->name, a->cloud, a->template_name, std::string(AgentPhaseName(a->phase)),
                   a->labels, a->job_id, a->slurm_state, a->state_reason, a->build_url, a->builds,
                   a->created_ms, a->connected_ms, a->outcome});
  }
  return out;
}

server::JenkinsReport Service::Jenkins() {
  server::JenkinsReport r;
  if (!provisioning_.provisioner) {
    r.message = NotProvisioning().message;
    return r;
  }
  ProvisionerStatus s = provisioning_.provisioner->Report();
  r.configured = true;
  r.reachable = s.jenkins_reachable;
  r.url = provisioning_.jenkins_url;
  r.version = s.jenkins_version;
  r.label_mode = s.label_mode;
  r.label_reason = s.label_reason;
  r.message = s.last_error;
  r.live_agents = s.live_agents;
  return r;
}

std::vector<server::TemplateView> Service::Templates() {
  std::vector<server::TemplateView> out;
  if (!provisioning_.templates) return out;
  for (const CloudTemplates& c : provisioning_.templates->Snapshot()) {
    for (const TemplateEntry& t : c.templates) {
      if (t.ephemeral) continue;
      std::string labels;
      for (const std::string& l : t.resolved.labels) labels += (labels.empty() ? "" : " ") + l;
      out.push_back({t.resolved.name, labels, c.name, false, "", 0});
    }
  }
  for (const EphemeralInfo& e : provisioning_.templates->Ephemeral()) {
    out.push_back(EphemeralView(e));
  }
  return out;
}

Result<server::TemplateView> Service::RegisterTemplate(const server::TemplateCommand& command) {
  if (!provisioning_.templates) return std::unexpected(NotProvisioning());
  std::chrono::seconds ttl = command.ttl_seconds > 0 ? std::chrono::seconds(command.ttl_seconds)
                                                     : provisioning_.default_ttl;
  Result<EphemeralInfo> e = provisioning_.templates->Register(command.cloud, command.json, ttl,
                                                              command.owner, command.job);
  if (!e) return std::unexpected(e.error());
  if (provisioning_.provisioner) provisioning_.provisioner->Wake();
  return EphemeralView(*e);
}

Result<server::TemplateView> Service::TouchTemplate(const std::string& name) {
  if (!provisioning_.templates) return std::unexpected(NotProvisioning());
  Result<EphemeralInfo> e = provisioning_.templates->Touch(name);
  if (!e) return std::unexpected(e.error());
  return EphemeralView(*e);
}

Status Service::ReleaseTemplate(const std::string& name) {
  if (!provisioning_.templates) return std::unexpected(NotProvisioning());
  return provisioning_.templates->Release(name);
}

Status Service::Reload(const config::Config& config) {
  if (!provisioning_.templates) return {};
  Status reloaded = provisioning_.templates->Reload(config);
  if (reloaded && provisioning_.provisioner) provisioning_.provisioner->Wake();
  return reloaded;
}

}  // namespace slurmfleet::fleet
