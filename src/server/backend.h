// Backend: the seam between the REST API and the engine. The HTTP server never touches engine
// state: it reads the store directly and asks the engine to act through this interface. The engine
// implements it by enqueuing a command for the one thread that owns engine state and waiting for
// its answer; tests use a small fake (tests/server/fake_backend.h).
//
// Thread safety: every method is called from the HTTP server's worker threads, several at once,
// so implementations must be safe to call concurrently. No method may throw.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "store/submission.h"

namespace slurmfleet::server {

// One configured Slurm endpoint, as GET /api/v1/clouds shows it.
struct CloudInfo {
  std::string name;
  std::string slurm_url;    // slurmrestd base URL; the server strips any user:password@ part
  std::string api_version;  // "auto" or a pinned version such as "v0.0.45"
  int max_agents = 0;
  int active_submissions = 0;  // submissions of this cloud in a non-terminal phase
};

// The outcome of trying one cloud's slurmrestd with its token. A failed attempt is a report with
// ok=false, not an Error: the attempt itself worked and says what is wrong.
struct ConnectionReport {
  bool ok = false;
  std::string api_version;                    // the version chosen (or pinned) for this cloud
  std::vector<std::string> offered_versions;  // what slurmrestd answered to, newest first
  std::string slurm_release;                  // "25.05.3"
  std::string cluster;
  std::string token_user;    // the `sun` claim of the token used; never the token
  std::string token_source;  // "token file /etc/slurmfleet/jwt", "env SLURM_JWT", ...
  std::string message;       // error text when !ok; never contains a secret
};

// A request to submit one job, as POST /api/v1/submissions carries it.
struct SubmitCommand {
  std::string cloud;
  std::string kind;    // "agent", "run", "job"
  std::string owner;   // who asked; the API token's name when the body names nobody
  nlohmann::json job;  // a job_desc object as a person writes it: the engine validates it
  std::string key;     // optional client-chosen idempotency key; empty: the engine makes one
};

// One elastic Jenkins agent, as GET /api/v1/agents shows it.
struct AgentView {
  std::string name;  // also its Jenkins node name and its submission key
  std::string cloud;
  std::string template_name;
  std::string phase;  // creating, launching, online, terminating, done, failed
  std::vector<std::string> labels;
  std::optional<uint32_t> job_id;
  std::string slurm_state;
  std::string state_reason;
  std::string build_url;  // the build running now
  int builds = 0;
  int64_t created_ms = 0;
  int64_t connected_ms = 0;  // 0 until connected
  std::string outcome;       // why it ended; empty while live
};

// A job template the provisioner may launch: static (configuration) or ephemeral (a pipeline's).
struct TemplateView {
  std::string name;
  std::string label;  // ephemeral: the one label node() asks for; static: its labels
  std::string cloud;
  bool ephemeral = false;
  std::string owner;
  int64_t expires_at = 0;  // ephemeral only
};

// POST /api/v1/templates: a pipeline's slurmJobTemplate.
struct TemplateCommand {
  std::string cloud;
  std::string json;         // the spec's inline JSON, as text
  int64_t ttl_seconds = 0;  // 0: the configured default
  std::string owner;
  std::string job;  // the Jenkins job's full name ("team/gpu-tests"), for folder restrictions
};

// The Jenkins side, for GET /api/v1/jenkins and test-connection.
struct JenkinsReport {
  bool configured = false;  // jenkins.url is set
  bool reachable = false;
  std::string url;
  std::string version;
  std::string label_mode;    // "script" or "expression"
  std::string label_reason;  // why that mode
  std::string message;       // the last error; empty when fine
  int live_agents = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Every configured cloud, in configuration order.
  virtual std::vector<CloudInfo> Clouds() = 0;

  // Tries `cloud`'s slurmrestd now. kNotFound for an unknown cloud; a failed connection is a
  // report with ok=false.
  virtual Result<ConnectionReport> TestConnection(const std::string& cloud) = 0;

  // Records the intent to submit `command.job` and returns the recorded submission.
  // kInvalidInput with `where` = the JSON path in the request body ("job.cpus_per_task", "cloud")
  // when the request is wrong; kConflict if command.key exists with a different request; the
  // existing submission, unchanged, if the same key was already submitted with the same request
  // (so a client may repeat a POST whose answer it lost).
  virtual Result<store::Submission> Submit(const SubmitCommand& command) = 0;

  // Asks for the submission's job to be cancelled; returns once the request is recorded, not once
  // Slurm has cancelled it. kNotFound for an unknown key. Cancelling a submission that has already
  // ended, or was already asked to cancel, is success.
  virtual Status Cancel(const std::string& key) = 0;

  // Agents, newest first; only live ones unless `include_ended`; at most `limit` (0: all).
  virtual std::vector<AgentView> Agents(bool include_ended, size_t limit) = 0;

  virtual JenkinsReport Jenkins() = 0;

  // Static templates of every cloud, then the ephemeral ones.
  virtual std::vector<TemplateView> Templates() = 0;
  // kNotFound for an unknown cloud (where "cloud"); kInvalidInput with where = "json.<path>";
  // kUnavailable when provisioning is not configured.
  virtual Result<TemplateView> RegisterTemplate(const TemplateCommand& command) = 0;
  virtual Result<TemplateView> TouchTemplate(const std::string& name) = 0;  // kNotFound
  virtual Status ReleaseTemplate(const std::string& name) = 0;              // kNotFound

  // False while starting up (recovering state) or draining after SIGTERM: the server then answers
  // /ready and every command (submit, cancel, test-connection) with 503.
  virtual bool Ready() const = 0;
};

}  // namespace slurmfleet::server
