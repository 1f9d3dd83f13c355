// `slurmfleet serve`: the daemon, and its composition root. It is the only place that names
// concrete types: it loads the config, opens the store, builds each cloud's transport, token
// source, client and engine, then the REST server. Start-up follows dependency order and every
// stop runs in reverse. SIGTERM/SIGINT: stop taking work, let each engine finish its pass (a
// submit POST in flight completes and is recorded), close the store, exit 0. SIGHUP: re-read the
// API tokens (whatever else fails), then the config, and swap in the clouds' templates, caps and
// folders; state is untouched, and a change that needs a restart (a cloud added or removed) is
// refused.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <set>
#include <thread>

#include "base/allocator_tuning.h"
#include "cli/commands.h"
#include "cli/config_clients.h"
#include "cli/exit_codes.h"
#include "config/config.h"
#include "fleet/service.h"
#include "fleet/unconfigured_clouds.h"
#include "jenkins/http_client.h"
#include "server/http_server.h"
#include "server/version.h"
#include "slurm/curl_transport.h"
#include "store/history_pruner.h"

extern char** environ;

namespace slurmfleet::cli {
namespace {

struct ServeOptions {
  std::string config_path;
  std::vector<std::string> set_flags;
  std::string log_level;  // overrides daemon.logLevel when set
};

void Log(const std::string& line) {
  auto now = std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
  std::cerr << fmt::format("{:%Y-%m-%dT%H:%M:%S}Z {}\n", now, line);
}

void DebugLog(std::string_view line) { Log("debug: " + std::string(line)); }

// Event texts quote what clients and Slurm sent (an owner, a reason): a line break there must not
// start a forged log line.
std::string WithoutControlCharacters(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

// Where one engine talks to Slurm: a cloud's coordinates, or the batch section's.
struct SlurmEndpoint {
  std::string name;
  std::string url;
  std::string api_version;
  bool tls_verify = true;
  std::string ca_file;
  config::SlurmCredentials credentials;
  size_t connections_ahead = 0;  // slurm::TransportOptions::connections_ahead
};

// The transport, token source, client and engine of one endpoint.
Result<fleet::CloudRuntime> MakeRuntime(const SlurmEndpoint& e, const config::DaemonConfig& daemon,
                                        const Clock& clock, store::Store& store) {
  fleet::CloudRuntime rt;
  rt.name = e.name;
  rt.slurm_url = e.url;
  rt.api_version = e.api_version;
  slurm::TransportOptions t;
  t.base_url = e.url;
  t.verify_tls = e.tls_verify;
  t.ca_file = e.ca_file;
  t.total_timeout = std::chrono::seconds(daemon.slurm_timeout_seconds);
  t.connections_ahead = e.connections_ahead;
  auto transport = slurm::CurlTransport::Create(t);
  if (!transport) return std::unexpected(transport.error());
  rt.transport = std::move(*transport);
  rt.tokens = MakeTokenSource(e.credentials, clock,
                              [](std::string_view m) { Log("warning: " + std::string(m)); });
  slurm::RestClientOptions ro;
  ro.api_version = e.api_version;
  rt.client = std::make_unique<slurm::LazyClient>(*rt.transport, *rt.tokens, ro);
  fleet::EngineOptions eo;
  eo.cloud = e.name;
  eo.instance = daemon.instance;
  eo.fast_interval = std::chrono::milliseconds(daemon.poll_fast_ms);
  eo.slow_interval = std::chrono::milliseconds(daemon.poll_slow_ms);
  eo.lost_grace = std::chrono::seconds(daemon.lost_grace_seconds);
  eo.orphan_grace = std::chrono::seconds(daemon.orphan_grace_seconds);
  // past the transport's total timeout, so a POST still in flight cannot land after the proof
  eo.absence_margin =
      std::chrono::duration_cast<std::chrono::seconds>(t.total_timeout) + std::chrono::seconds(15);
  eo.fail_fast.partition_down_is_fatal = daemon.partition_down_is_fatal;
  if (daemon.debug_log) eo.debug_log = DebugLog;
  auto engine = fleet::Engine::Create(store, *rt.client, clock, eo);
  if (!engine) return std::unexpected(engine.error());
  rt.engine = std::move(*engine);
  Log(fmt::format("{} {}: slurmrestd {} (API {}), {}, {} live submissions",
                  e.name == fleet::kBatchCloud ? "section" : "cloud", e.name, rt.slurm_url,
                  rt.api_version, rt.tokens->Describe(), rt.engine->active_count()));
  return rt;
}

Result<std::pair<std::string, int>> SplitListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos)
    return Fail(Code::kInvalidInput, "not HOST:PORT", "daemon.listen");
  std::string host = listen.substr(0, colon);
  // [::1]:8470: the address goes to getaddrinfo without its brackets.
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, std::stoi(listen.substr(colon + 1)));
}

Result<config::Config> Load(const ServeOptions& o) {
  std::vector<std::string> set_flags = o.set_flags;
  if (!o.log_level.empty()) set_flags.push_back("daemon.logLevel=" + o.log_level);
  Result<std::vector<config::Override>> overrides =
      config::CollectOverrides(config::SlurmfleetVariables(environ), set_flags);
  if (!overrides) return std::unexpected(overrides.error());
  return config::LoadConfig(o.config_path, *overrides);
}

int RunServe(const ServeOptions& options) {
  // Signals are taken by sigwait() on this thread only: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (!TuneAllocatorForDaemon())
    Log("warning: glibc refused the allocator settings; using its defaults");

  Result<config::Config> cfg = Load(options);
  if (!cfg) {
    Log("error: " + cfg.error().ToString());
    return kExitConfig;
  }
  const config::DaemonConfig& daemon = cfg->daemon;
  SystemClock clock;

  Result<std::unique_ptr<store::Store>> store = store::Store::Open(daemon.state_file, clock);
  if (!store) {
    Log("error: " + store.error().ToString());
    return store.error().code == Code::kConflict ? kExitFailure : kExitConfig;
  }

  Result<std::unique_ptr<server::ApiTokens>> tokens =
      daemon.api_tokens_file.empty()
          ? Result<std::unique_ptr<server::ApiTokens>>(server::ApiTokens::None())
          : server::ApiTokens::Load(daemon.api_tokens_file);
  if (!tokens) {
    Log("error: " + tokens.error().ToString());
    return kExitConfig;
  }

  // A wave of agents' submits goes out on connections already open, not after as many connects.
  // Each held connection takes one of slurmrestd's connection slots (124 by default), so the
  // clouds share one engine's worth of POSTs in flight. Batch runs wait on no queue: none.
  const size_t ahead_per_cloud =
      cfg->clouds.empty()
          ? 0
          : std::max<size_t>(2, fleet::EngineOptions{}.submit_concurrency / cfg->clouds.size());
  std::vector<fleet::CloudRuntime> clouds;
  for (const config::Cloud& cloud : cfg->clouds) {
    Result<fleet::CloudRuntime> rt =
        MakeRuntime({cloud.name, cloud.slurm_rest_api_url, cloud.api_version, cloud.tls_verify,
                     cloud.ca_file, cloud.credentials, ahead_per_cloud},
                    daemon, clock, **store);
    if (!rt) {
      Log("error: cloud " + cloud.name + ": " + rt.error().ToString());
      return kExitConfig;
    }
    rt->max_agents = cloud.max_agents;
    clouds.push_back(std::move(*rt));
  }
  // The provisioner launches on the Jenkins clouds only; the batch section gets its own engine.
  std::vector<fleet::ProvisionerCloud> targets;
  for (fleet::CloudRuntime& rt : clouds) {
    targets.push_back({rt.name, rt.engine.get(), rt.client.get()});
  }
  if (cfg->batch) {
    const config::BatchConfig& b = *cfg->batch;
    Result<fleet::CloudRuntime> rt =
        MakeRuntime({std::string(fleet::kBatchCloud), b.rest_url, b.api_version, b.tls_verify,
                     b.ca_file, b.credentials, 0},
                    daemon, clock, **store);
    if (!rt) {
      Log("error: batch: " + rt.error().ToString());
      return kExitConfig;
    }
    rt->default_partition = b.partition;
    clouds.push_back(std::move(*rt));
  }

  fleet::Provisioning provisioning;
  if (cfg->jenkins) {
    const config::JenkinsConfig& j = *cfg->jenkins;
    auto client = jenkins::HttpClient::Create(JenkinsClientOptions(j));
    if (!client) {
      Log("error: jenkins: " + client.error().ToString());
      return kExitConfig;
    }
    provisioning.jenkins = std::move(*client);
    provisioning.jenkins_url = j.url;
    provisioning.default_ttl = std::chrono::seconds(j.ephemeral_ttl_seconds);
    auto templates = fleet::TemplateRegistry::Create(**store, clock, *cfg);
    if (!templates) {
      Log("error: " + templates.error().ToString());
      return kExitFailure;
    }
    provisioning.templates = std::move(*templates);
    fleet::ProvisionerOptions po;
    po.instance = daemon.instance;
    po.interval = std::chrono::milliseconds(j.poll_ms);
    if (daemon.debug_log) po.debug_log = DebugLog;
    auto provisioner = fleet::Provisioner::Create(*provisioning.jenkins, *provisioning.templates,
                                                  **store, clock, std::move(targets), po);
    if (!provisioner) {
      Log("error: " + provisioner.error().ToString());
      return kExitFailure;
    }
    provisioning.provisioner = std::move(*provisioner);
    Log("jenkins " + j.url + " as " + j.credentials.user + ": provisioning agents");
  } else {
    Log("no jenkins.url configured: agent provisioning is off");
  }
  std::set<std::string> configured;
  for (const fleet::CloudRuntime& rt : clouds) configured.insert(rt.name);
  store::ListFilter live_only;
  live_only.active_only = true;
  live_only.requests = false;
  if (auto live = (*store)->List(live_only); live) {
    for (const fleet::UnconfiguredCloud& c : fleet::UnconfiguredClouds(*live, configured)) {
      Log("warning: " + fleet::DescribeUnconfiguredCloud(c));
    }
  } else {
    Log("warning: cannot look for work of clouds no longer configured: " + live.error().ToString());
  }
  fleet::Service service(**store, std::move(clouds), std::move(provisioning));
  auto listen = SplitListen(daemon.listen);
  if (!listen) {
    Log("error: " + listen.error().ToString());
    return kExitConfig;
  }
  server::ServerOptions so;
  so.listen_host = listen->first;
  so.listen_port = listen->second;
  so.access_log = [](const server::AccessLogEntry& e) { Log(server::FormatAccessLog(e)); };
  auto api = server::ApiServer::Start(so, service, **store, **tokens, clock);
  if (!api) {
    Log("error: " + api.error().ToString());
    return kExitConfig;
  }
  // Every event becomes one log line, so operators see what the engines do; start after the
  // events of earlier runs, before the engines write new ones.
  int64_t logged_up_to = 0;
  if (auto last = (*store)->LastEventId(); last) logged_up_to = *last;
  service.Start();
  std::unique_ptr<store::HistoryPruner> pruner;
  if (daemon.history_days > 0) {
    store::HistoryPrunerOptions po;
    po.keep = std::chrono::hours(24) * daemon.history_days;
    po.log = [](std::string_view line) { Log(std::string(line)); };
    pruner = std::make_unique<store::HistoryPruner>(**store, clock, std::move(po));
  }
  Log(fmt::format("slurmfleet {} serving on {}:{} (state {}, instance {}, history kept {})",
                  server::kSlurmfleetVersion, so.listen_host, (*api)->port(), daemon.state_file,
                  daemon.instance,
                  daemon.history_days > 0 ? fmt::format("{} days", daemon.history_days)
                                          : std::string("for ever")));

  std::atomic<bool> stopping{false};
  std::thread event_log([&] {
    int64_t after = logged_up_to;
    while (!stopping) {
      if (auto events = (*store)->Events("", after, 1000); events) {
        for (const store::Event& e : *events) {
          Log(fmt::format("{} {}: {}", e.key, e.type, WithoutControlCharacters(e.message)));
          after = e.id;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });

  for (;;) {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGHUP) {
      // Tokens first and whatever the configuration says: revoking a leaked token must not wait
      // for someone to notice that an unrelated edit broke the configuration file.
      if (Status reloaded = (*tokens)->Reload(); !reloaded) {
        Log("API tokens not reloaded: " + reloaded.error().ToString());
      }
      Result<config::Config> fresh = Load(options);
      if (!fresh) {
        Log("reload refused, keeping the running configuration: " + fresh.error().ToString());
        continue;
      }
      if (Status reloaded = service.Reload(*fresh); !reloaded) {
        Log("templates and caps not reloaded: " + reloaded.error().ToString());
        continue;
      }
      Log("configuration re-read (" + options.config_path + ")");
      continue;
    }
    Log(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": draining");
    break;
  }
  // Commands get 503 from here on; reads and /ready (503) go on answering until the engines have
  // finished their passes and recorded what they sent.
  service.Drain();
  service.Stop();
  (*api)->Stop();
  pruner.reset();
  stopping = true;
  event_log.join();
  Log("stopped");
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "run the control plane daemon");
  cmd->add_option("--config", options->config_path, "the configuration file")
      ->envname("SLURMFLEET_CONFIG")
      ->required();
  cmd->add_option("--set", options->set_flags,
                  "override a config value: PATH=VALUE (e.g. daemon.listen=0.0.0.0:8470)");
  cmd->add_option("--log-level", options->log_level,
                  "info, or debug: also each queue item's provisioning decision and each engine "
                  "pass (overrides daemon.logLevel)");
  cmd->callback([options, &result] { result.exit_code = RunServe(*options); });
}

}  // namespace slurmfleet::cli
