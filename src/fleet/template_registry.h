// TemplateRegistry: the job templates the provisioner may launch, per cloud: the static ones of
// the configuration (replaced whole on SIGHUP) and the ephemeral ones that pipelines register
// through the REST API (slurmJobTemplate). Ephemeral templates are persisted as store records
// (kind "template"), so a restart keeps them, and end when released or after `ttl` without use.
//
// Thread safety: every method may be called from any thread (the REST API's workers register
// and release; the provisioner takes snapshots).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "config/config.h"
#include "spec/resolve.h"
#include "store/store.h"

namespace slurmfleet::fleet {

inline constexpr std::string_view kTemplateRecord = "template";

struct TemplateEntry {
  spec::ResolvedTemplate resolved;
  bool ephemeral = false;
  std::string owner;       // ephemeral: who registered it (the pipeline's run)
  int64_t expires_at = 0;  // ephemeral: unix seconds; extended by Touch() and by use
};

// One cloud's provisioning settings and templates, as of one moment.
struct CloudTemplates {
  std::string name;
  std::string jenkins_url;  // given to agents as JENKINS_URL; ends with '/'
  int max_agents = 0;
  std::vector<std::string> authorized_folders;
  std::vector<TemplateEntry> templates;  // static in configuration order, then ephemeral
};

// What POST /api/v1/templates answers.
struct EphemeralInfo {
  std::string name;   // "eph-3f2a9c1b"
  std::string label;  // "slurmfleet-eph-3f2a9c1b": what node() asks for
  std::string cloud;
  std::string owner;
  int64_t expires_at = 0;
};

class TemplateRegistry {
 public:
  // `jenkins_url`: the URL the daemon uses for Jenkins, for clouds without jenkinsUrl.
  // Ephemeral templates of earlier runs are loaded from `store`.
  static Result<std::unique_ptr<TemplateRegistry>> Create(store::Store& store, const Clock& clock,
                                                          const config::Config& config);

  // Swaps in the static templates, caps and folders of `config` (SIGHUP). Clouds are matched by
  // name; a cloud that is new or gone is reported (kInvalidInput) and nothing changes, since its
  // Slurm connection and engine are made at start-up only.
  Status Reload(const config::Config& config);

  std::vector<CloudTemplates> Snapshot() const;

  // Parses `pipeline_json` ({job, pyxis, agent}) over the cloud's defaults and stores it.
  // kNotFound for an unknown cloud; kInvalidInput with where = "json.<path>" when the JSON is
  // wrong; `ttl` is clamped to [60 s, 7 days]. `job`, the Jenkins job's full name when known
  // ("" otherwise), must lie in one of the cloud's authorized folders (kForbidden, where = "job"):
  // its items would never get an agent, so the pipeline is told now instead of waiting.
  Result<EphemeralInfo> Register(const std::string& cloud, const std::string& pipeline_json,
                                 std::chrono::seconds ttl, const std::string& owner,
                                 const std::string& job);
  // Extends the TTL. kNotFound when unknown or already released.
  Result<EphemeralInfo> Touch(const std::string& name);
  // Ends it now; agents already running finish their build. kNotFound when unknown.
  Status Release(const std::string& name);
  std::vector<EphemeralInfo> Ephemeral() const;

  // Ends every ephemeral template past its expiry whose name is not in `in_use` and extends
  // those in use. Returns the names ended.
  std::vector<std::string> Expire(const std::set<std::string>& in_use);

 private:
  struct Registered {
    EphemeralInfo info;
    spec::ResolvedTemplate resolved;
    std::chrono::seconds ttl{0};
    std::string pipeline_json;
    store::Record record;  // as last stored, for test-and-set
  };

  TemplateRegistry(store::Store& store, const Clock& clock);
  int64_t Now() const;
  // Writes `e` (inactive when `ended`) with an event under its name.
  Status Persist(Registered& e, bool ended, const std::string& event_type,
                 const std::string& message);
  Result<spec::ResolvedTemplate> ResolveEphemeral(const config::Cloud& cloud,
                                                  const std::string& name, const std::string& label,
                                                  const std::string& pipeline_json) const;

  store::Store& store_;
  const Clock& clock_;
  mutable std::mutex mu_;
  config::Config config_;              // guarded by mu_
  std::vector<Registered> ephemeral_;  // guarded by mu_
};

}  // namespace slurmfleet::fleet
