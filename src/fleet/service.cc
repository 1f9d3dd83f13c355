#include "fleet/service.h"

#include "slurm/dialect.h"

namespace slurmfleet::fleet {

Service::Service(store::Store& store, std::vector<CloudRuntime> clouds)
    : store_(store), clouds_(std::move(clouds)) {}

Service::~Service() { Stop(); }

void Service::Start() {
  for (CloudRuntime& c : clouds_) {
    Engine* engine = c.engine.get();
    threads_.emplace_back([engine] { engine->Run(); });
  }
  ready_ = true;
}

void Service::Drain() { ready_ = false; }

void Service::Stop() {
  ready_ = false;
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
  std::vector<server::CloudInfo> out;
  for (const CloudRuntime& c : clouds_) {
    out.push_back({c.name, c.slurm_url, c.api_version, c.max_agents,
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
  CloudRuntime* c = Find(command.cloud);
  if (!c) {
    std::string known;
    for (const CloudRuntime& r : clouds_) known += (known.empty() ? "" : ", ") + r.name;
    return Fail(Code::kInvalidInput, "no cloud named '" + command.cloud + "'; configured: " + known,
                "cloud");
  }
  Result<slurm::JobRequest> request = slurm::JobRequestFromJobDesc(command.job, "job");
  if (!request) return std::unexpected(request.error());
  if (request->script.empty()) {
    return Fail(Code::kInvalidInput, "a batch script is required; put it in job.script",
                "job.script");
  }
  if (!request->script.starts_with("#!")) {
    return Fail(Code::kInvalidInput,
                "the script must start with an interpreter line such as #!/bin/bash", "job.script");
  }
  // Slurm requires an environment and the job sees only what is sent
  if (request->environment.empty())
    request->environment.push_back({"PATH", "/usr/local/bin:/usr/bin:/bin", false});
  return c->engine->AddIntent(command.key, command.kind.empty() ? "job" : command.kind,
                              command.owner, *request);
}

Status Service::Cancel(const std::string& key) {
  Result<store::Submission> s = store_.Get(key);
  if (!s) return std::unexpected(s.error());
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
