// Service: every configured cloud's engine, each on its own thread, behind the REST API's
// Backend interface. Built by the composition root (cli/serve_command.cc), which owns the order:
// Start() after the HTTP server may take requests, Drain() on SIGTERM, Stop() last.
//
// Thread safety: the Backend methods may be called from any thread; Start/Drain/Stop from the
// main thread only.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/token_source.h"
#include "fleet/engine.h"
#include "fleet/provisioner.h"
#include "fleet/template_registry.h"
#include "jenkins/client.h"
#include "server/backend.h"
#include "slurm/lazy_client.h"
#include "slurm/transport.h"
#include "store/store.h"

namespace slurmfleet::fleet {

// Everything one cloud needs; the composition root fills it in.
// The name under which the configuration's batch section runs: its own engine, the default
// target of a submission that names no cloud.
inline constexpr std::string_view kBatchCloud = "batch";

struct CloudRuntime {
  std::string name;
  std::string slurm_url;
  std::string api_version;  // as configured: "auto" or pinned
  int max_agents = 0;
  std::string default_partition;  // for a submitted job that names none (the batch section's)
  std::unique_ptr<slurm::Transport> transport;
  std::unique_ptr<auth::TokenSource> tokens;
  std::unique_ptr<slurm::LazyClient> client;
  std::unique_ptr<Engine> engine;
};

// The Jenkins side; every member null when jenkins.url is not configured.
struct Provisioning {
  std::string jenkins_url;
  std::chrono::seconds default_ttl{3600};  // of ephemeral templates
  std::unique_ptr<jenkins::Client> jenkins;
  std::unique_ptr<TemplateRegistry> templates;
  std::unique_ptr<Provisioner> provisioner;  // built over the clouds' engines
};

class Service final : public server::Backend {
 public:
  Service(store::Store& store, std::vector<CloudRuntime> clouds, Provisioning provisioning = {});
  ~Service() override;

  void Start();  // one engine thread per cloud; Ready() becomes true
  void Drain();  // Ready() becomes false: new commands are refused, engines keep running
  void Stop();   // engines finish their current pass and stop; joins the threads

  std::vector<server::CloudInfo> Clouds() override;
  Result<server::ConnectionReport> TestConnection(const std::string& cloud) override;
  Result<store::Submission> Submit(const server::SubmitCommand& command) override;
  Status Cancel(const std::string& key) override;
  std::vector<server::AgentView> Agents(bool include_ended, size_t limit) override;
  server::JenkinsReport Jenkins() override;
  std::vector<server::TemplateView> Templates() override;
  Result<server::TemplateView> RegisterTemplate(const server::TemplateCommand& command) override;
  Result<server::TemplateView> TouchTemplate(const std::string& name) override;
  Status ReleaseTemplate(const std::string& name) override;

  // SIGHUP: swaps in the templates, caps and folders of `config`. kInvalidInput (nothing changed)
  // when the change needs a restart.
  Status Reload(const config::Config& config);
  bool Ready() const override { return ready_.load(); }

 private:
  CloudRuntime* Find(const std::string& cloud);

  store::Store& store_;
  std::vector<CloudRuntime> clouds_;
  Provisioning provisioning_;
  std::vector<std::thread> threads_;  // the engines'
  std::thread provisioner_thread_;
  std::atomic<bool> ready_{false};
};

}  // namespace slurmfleet::fleet
