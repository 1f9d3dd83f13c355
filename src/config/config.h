// The slurmfleet configuration: one YAML file shaped like the Jenkins JCasC `clouds:` block of the
// Slurm plugin, plus `batch:` (the batch-run side) and `daemon:`. Environment variables
// (SLURMFLEET_*) override the file and command-line `--set` flags override both (overrides.h).
// Credentials are only ever referenced (file paths, a variable name), never written inline.
//
//   jenkins:
//     clouds:
//       - slurm:
//           name: local
//           slurmRestApiUrl: http://127.0.0.1:6820
//           credentials: {user: ci, jwtFile: /etc/slurmfleet/slurm.jwt}
//           jenkinsUrl: http://jenkins:8080/
//           jobTemplates:
//             - {name: cpu, label: linux, agentLaunch: {downloadJar: true}}
//   batch:  {restUrl: ..., partition: gpu, runtimeProfile: enroot-pyxis, storageRoot: /lustre/sf}
//   daemon: {listen: 127.0.0.1:8470, stateFile: /var/lib/slurmfleet/state.db}
//
// docs/configuration.md documents every key. Loading never throws; the model is plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "config/diagnostic.h"
#include "config/overrides.h"
#include "spec/job_template.h"

namespace slurmfleet::config {

inline constexpr std::string_view kAutoApiVersion = "auto";

// Where a Slurm JWT comes from. Exactly one source per credentials block.
struct SlurmCredentials {
  enum class Source { kTokenFile, kEnvironment, kMintFromKey };
  Source source = Source::kTokenFile;
  std::string user;          // X-SLURM-USER-NAME; required when minting
  std::string token_file;    // kTokenFile (jwtFile): re-read whenever Slurm rejects the token
  std::string token_env;     // kEnvironment (jwtEnv): the variable's name, e.g. SLURM_JWT
  std::string jwt_key_file;  // kMintFromKey (jwtKeyFile): Slurm's HS256 jwt_key
  int token_lifetime_seconds = 1800;  // kMintFromKey (tokenLifetimeSeconds)
  // kEnvironment: the key that gave token_env ("batch.credentials.jwtEnv"), which messages name
  // instead of token_env: that may be a token pasted where the variable's name belongs
  std::string token_env_key;

  bool operator==(const SlurmCredentials&) const = default;
};

// How slurmfleet authenticates to Jenkins: a user and a file holding that user's API token.
struct JenkinsCredentials {
  std::string user;
  std::string api_token_file;
  bool operator==(const JenkinsCredentials&) const = default;
};

struct Cloud {
  std::string name;
  std::string slurm_rest_api_url;
  std::string api_version = std::string(kAutoApiVersion);  // "auto" or "v0.0.4x"
  bool tls_verify = true;
  std::string ca_file;  // PEM bundle for slurmrestd's certificate; empty: the system's CAs
  SlurmCredentials credentials;
  std::string jenkins_url;  // JENKINS_URL of agents: jenkinsUrl, else jenkins.url; ends with '/'
  int max_agents = 10;
  std::vector<std::string> authorized_folders;  // empty: every folder may use this cloud
  // The cloud layer under every template: defaultPartition, agentTimeoutMinutes,
  // defaultAgentLaunch and environment, as a template layer.
  spec::JobTemplate defaults;
  std::vector<spec::JobTemplate> job_templates;  // as written; resolve with spec::Resolve

  bool operator==(const Cloud&) const = default;
};

// The Jenkins controller the daemon watches and provisions for (`jenkins.url` and beside it).
// Absent: the daemon serves submissions only and starts no agents.
struct JenkinsConfig {
  std::string url;  // the URL slurmfleet uses for Jenkins' API; ends with '/'
  JenkinsCredentials credentials;
  bool tls_verify = true;
  std::string ca_file;  // PEM bundle for Jenkins' certificate; empty: the system's CAs
  int poll_ms = 2000;   // queue and node polling interval
  // Overrides agentTimeoutMinutes of every cloud and template (SLURMFLEET_AGENT_TIMEOUT_MINUTES,
  // like the plugin's system property).
  std::optional<int> agent_timeout_minutes;
  int ephemeral_ttl_seconds = 3600;  // default TTL of templates registered by pipelines

  bool operator==(const JenkinsConfig&) const = default;
};

enum class RuntimeProfile { kEnrootPyxis, kApptainer };

// The batch-run side (SLURMFLEET_SLURM_*, SLURMFLEET_STORAGE_ROOT, ...).
struct BatchConfig {
  std::string rest_url;
  std::string api_version = "v0.0.45";
  bool tls_verify = true;
  std::string ca_file;  // a site CA bundle for restUrl; empty: the system's
  SlurmCredentials credentials;
  std::string partition;
  RuntimeProfile runtime_profile = RuntimeProfile::kEnrootPyxis;
  std::string storage_root;          // on the parallel filesystem, as this host sees it
  std::string cluster_storage_root;  // the same root as compute nodes see it; default storage_root
  std::string runtime_registry_file;

  bool operator==(const BatchConfig&) const = default;
};

struct DaemonConfig {
  std::string listen = "127.0.0.1:8470";
  std::string state_file = "/var/lib/slurmfleet/state.db";
  std::string api_tokens_file;  // bearer tokens of the REST API; empty: only /health and /ready
  std::string instance = "default";  // tags our jobs: two installations never touch each other's
  int poll_fast_ms = 1000;           // tracking interval while anything is starting or unsure
  int poll_slow_ms = 10000;          // tracking interval when everything is steady
  int lost_grace_seconds = 60;       // a tracked job missing from Slurm this long is lost
  int orphan_grace_seconds = 120;    // a job with our tag that no submission owns is cancelled then
  bool partition_down_is_fatal = false;  // fail pending jobs of a down partition at once
  int slurm_timeout_seconds = 30;        // total timeout of one request to slurmrestd
  int history_days = 30;   // a key's history idle this long is removed; 0 keeps everything
  bool debug_log = false;  // logLevel debug: the planner's decisions and the engines' passes
  bool operator==(const DaemonConfig&) const = default;
};

struct Config {
  std::optional<JenkinsConfig> jenkins;
  std::vector<Cloud> clouds;
  std::optional<BatchConfig> batch;
  DaemonConfig daemon;

  const Cloud* FindCloud(std::string_view name) const;  // nullptr when absent
  bool operator==(const Config&) const = default;
};

struct LoadResult {
  Config config;  // complete only when `diagnostics` is empty
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return diagnostics.empty(); }
};

// Decodes and validates `text` (named `file` in diagnostics) with `overrides` applied. Reports
// every problem: YAML syntax, unknown or misspelt keys, wrong types, out-of-range values, missing
// required keys, conflicting credential sources, invalid names, inheritFrom cycles, and raw job
// fields that the API version's job_desc schema refuses. Every template is resolved against its
// cloud, so a template that cannot render is reported here.
LoadResult LoadConfigText(std::string_view text, std::string_view file,
                          const std::vector<Override>& overrides);

// Reads `path`, then LoadConfigText. A file that cannot be read is one diagnostic.
LoadResult LoadConfigFile(const std::string& path, const std::vector<Override>& overrides);

// For callers that only need a usable config: kInvalidInput whose message is the first diagnostic
// and the number of others ("... (and 3 more problems; run slurmfleet validate)").
Result<Config> LoadConfig(const std::string& path, const std::vector<Override>& overrides);

}  // namespace slurmfleet::config
