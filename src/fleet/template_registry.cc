#include "fleet/template_registry.h"

#include <openssl/rand.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "fleet/agent_plan.h"
#include "spec/inline_json.h"
#include "spec/job_desc_schema.h"

namespace slurmfleet::fleet {
namespace {

constexpr std::chrono::seconds kMinTtl{60};
constexpr std::chrono::seconds kMaxTtl{7 * 24 * 3600};

std::string RandomHex8() {
  unsigned char bytes[4];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    // a name collision is caught by the store's primary key, so a weaker source is still safe
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(std::rand());
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::vector<const spec::JobDescSchema*> Schemas(const std::string& api_version) {
  std::vector<const spec::JobDescSchema*> out;
  if (const spec::JobDescSchema* s = spec::FindJobDescSchema(api_version)) {
    out.push_back(s);
  } else {
    for (const spec::JobDescSchema& s : spec::AllJobDescSchemas()) out.push_back(&s);
  }
  return out;
}

std::string Doc(const EphemeralInfo& info, std::chrono::seconds ttl, const std::string& json) {
  return nlohmann::json{{"label", info.label},
                        {"owner", info.owner},
                        {"expiresAt", info.expires_at},
                        {"ttlSeconds", ttl.count()},
                        {"json", json}}
      .dump();
}

// The provisioner would skip every item of `job` on this cloud (agent_plan.h): say so at once.
Status CheckFolder(const config::Cloud& cloud, const std::string& job) {
  if (job.empty()) return {};
  size_t slash = job.rfind('/');
  std::string folder = slash == std::string::npos ? "" : job.substr(0, slash);
  if (FolderAllowed(cloud.authorized_folders, folder)) return {};
  std::string folders;
  for (const std::string& f : cloud.authorized_folders)
    folders += (folders.empty() ? "" : ", ") + f;
  return Fail(Code::kForbidden,
              "cloud " + cloud.name + " serves only jobs in the folders " + folders + "; " + job +
                  " is in " + (folder.empty() ? std::string("no folder") : "folder " + folder) +
                  ". Use a cloud that serves it, or add the folder to authorizedFolders of " +
                  cloud.name,
              "job");
}

}  // namespace

TemplateRegistry::TemplateRegistry(store::Store& store, const Clock& clock)
    : store_(store), clock_(clock) {}

int64_t TemplateRegistry::Now() const { return UnixSeconds(clock_); }

Result<std::unique_ptr<TemplateRegistry>> TemplateRegistry::Create(store::Store& store,
                                                                   const Clock& clock,
                                                                   const config::Config& config) {
  std::unique_ptr<TemplateRegistry> r(new TemplateRegistry(store, clock));
  r->config_ = config;
  Result<std::vector<store::Record>> records =
      store.ListRecords(std::string(kTemplateRecord), true);
  if (!records) return std::unexpected(records.error());
  for (const store::Record& rec : *records) {
    const config::Cloud* cloud = config.FindCloud(rec.cloud);
    Registered e;
    e.record = rec;
    try {
      nlohmann::json doc = nlohmann::json::parse(rec.doc);
      e.info =
          EphemeralInfo{rec.name, doc.at("label").get<std::string>(), rec.cloud,
                        doc.at("owner").get<std::string>(), doc.at("expiresAt").get<int64_t>()};
      e.ttl = std::chrono::seconds(doc.at("ttlSeconds").get<int64_t>());
      e.pipeline_json = doc.at("json").get<std::string>();
    } catch (const std::exception& ex) {
      return Fail(Code::kInternal,
                  std::string("ephemeral template record is damaged: ") + ex.what(),
                  "template " + rec.name);
    }
    Result<spec::ResolvedTemplate> resolved =
        Fail(Code::kNotFound, "cloud " + rec.cloud + " is no longer configured");
    if (cloud) resolved = r->ResolveEphemeral(*cloud, e.info.name, e.info.label, e.pipeline_json);
    if (!resolved) {
      (void)r->Persist(e, /*ended=*/true, "released",
                       "ephemeral template dropped at start-up: " + resolved.error().ToString());
      continue;
    }
    e.resolved = std::move(*resolved);
    r->ephemeral_.push_back(std::move(e));
  }
  return r;
}

Status TemplateRegistry::Reload(const config::Config& config) {
  std::lock_guard lock(mu_);
  std::set<std::string> before, after;
  for (const config::Cloud& c : config_.clouds) before.insert(c.name);
  for (const config::Cloud& c : config.clouds) after.insert(c.name);
  if (before != after) {
    return Fail(Code::kInvalidInput,
                "the set of clouds changed; adding or removing a cloud needs a restart",
                "jenkins.clouds");
  }
  config_ = config;
  return {};
}

Result<spec::ResolvedTemplate> TemplateRegistry::ResolveEphemeral(
    const config::Cloud& cloud, const std::string& name, const std::string& label,
    const std::string& pipeline_json) const {
  std::vector<const spec::JobDescSchema*> schemas = Schemas(cloud.api_version);
  Result<spec::JobTemplate> layer = spec::ParseInlineJson(pipeline_json, schemas);
  if (!layer) {
    Error e = layer.error();
    e.where = e.where.empty() ? "json" : "json." + e.where;
    return std::unexpected(e);
  }
  spec::JobTemplate base;
  base.name = name;
  base.label = label;
  // The plugin's pipeline default, when neither the cloud nor the JSON names a directory.
  if (!cloud.defaults.job.current_working_directory) {
    base.job.current_working_directory = "/tmp/jenkins-" + cloud.name;
  }
  const spec::JobTemplate templates[] = {base};
  Result<spec::ResolvedTemplate> resolved = spec::Resolve(cloud.defaults, templates, name, &*layer);
  if (!resolved) {
    // Resolve names a template's configuration keys; the pipeline wrote JSON, so name its path
    static constexpr std::pair<std::string_view, std::string_view> kJsonPaths[] = {
        {".workingDirectory", "json.job.current_working_directory"},
        {".pyxis.containerImage", "json.pyxis.containerImage"},
        {".pyxis.containerWorkdir", "json.pyxis.containerWorkdir"},
        {".agentLaunch.jarPath", "json.agent.jar_path"},
    };
    Error e = resolved.error();
    const std::string config_path = e.where;
    e.where = "json";
    for (const auto& [key, path] : kJsonPaths) {
      if (config_path.ends_with(key)) e.where = path;
    }
    return std::unexpected(e);
  }
  return resolved;
}

std::vector<CloudTemplates> TemplateRegistry::Snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<CloudTemplates> out;
  // 0: no override. A plain int: GCC 12 at -O2 misreads a copied optional as maybe-uninitialized.
  const int timeout_override = config_.jenkins && config_.jenkins->agent_timeout_minutes
                                   ? *config_.jenkins->agent_timeout_minutes
                                   : 0;
  for (const config::Cloud& cloud : config_.clouds) {
    CloudTemplates ct;
    ct.name = cloud.name;
    ct.jenkins_url = cloud.jenkins_url;
    ct.max_agents = cloud.max_agents;
    ct.authorized_folders = cloud.authorized_folders;
    for (const spec::JobTemplate& t : cloud.job_templates) {
      Result<spec::ResolvedTemplate> resolved =
          spec::Resolve(cloud.defaults, cloud.job_templates, t.name);
      if (!resolved) continue;  // validated at load: cannot happen with a loaded config
      ct.templates.push_back(TemplateEntry{std::move(*resolved), false, "", 0});
    }
    for (const Registered& e : ephemeral_) {
      if (e.info.cloud != cloud.name) continue;
      ct.templates.push_back(TemplateEntry{e.resolved, true, e.info.owner, e.info.expires_at});
    }
    if (timeout_override > 0) {
      for (TemplateEntry& t : ct.templates) t.resolved.agent_timeout_minutes = timeout_override;
    }
    out.push_back(std::move(ct));
  }
  return out;
}

Status TemplateRegistry::Persist(Registered& e, bool ended, const std::string& event_type,
                                 const std::string& message) {
  store::Record record = e.record;
  record.kind = std::string(kTemplateRecord);
  record.name = e.info.name;
  record.cloud = e.info.cloud;
  record.active = !ended;
  record.doc = Doc(e.info, e.ttl, e.pipeline_json);
  if (Status put = store_.PutRecord(record, store::Event{0, "", 0, event_type, message}); !put) {
    return put;
  }
  e.record = record;
  return {};
}

Result<EphemeralInfo> TemplateRegistry::Register(const std::string& cloud_name,
                                                 const std::string& pipeline_json,
                                                 std::chrono::seconds ttl, const std::string& owner,
                                                 const std::string& job) {
  std::lock_guard lock(mu_);
  const config::Cloud* cloud = config_.FindCloud(cloud_name);
  if (!cloud) {
    std::string known;
    for (const config::Cloud& c : config_.clouds) known += (known.empty() ? "" : ", ") + c.name;
    return Fail(Code::kNotFound,
                "no cloud is named '" + cloud_name + "' (configured: " + known + ")", "cloud");
  }
  if (Status allowed = CheckFolder(*cloud, job); !allowed) return std::unexpected(allowed.error());
  Registered e;
  e.info.name = "eph-" + RandomHex8();
  e.info.label = "slurmfleet-" + e.info.name;
  e.info.cloud = cloud_name;
  e.info.owner = owner;
  e.ttl = std::clamp(ttl, kMinTtl, kMaxTtl);
  e.info.expires_at = Now() + e.ttl.count();
  e.pipeline_json = pipeline_json;
  Result<spec::ResolvedTemplate> resolved =
      ResolveEphemeral(*cloud, e.info.name, e.info.label, pipeline_json);
  if (!resolved) return std::unexpected(resolved.error());
  e.resolved = std::move(*resolved);
  if (Status put = Persist(e, false, "registered",
                           "ephemeral template " + e.info.label + " for " +
                               (owner.empty() ? std::string("an unnamed pipeline") : owner) +
                               " on cloud " + cloud_name);
      !put) {
    return std::unexpected(put.error());
  }
  ephemeral_.push_back(e);
  return e.info;
}

Result<EphemeralInfo> TemplateRegistry::Touch(const std::string& name) {
  std::lock_guard lock(mu_);
  for (Registered& e : ephemeral_) {
    if (e.info.name != name) continue;
    e.info.expires_at = Now() + e.ttl.count();
    store::Record record = e.record;
    record.doc = Doc(e.info, e.ttl, e.pipeline_json);
    if (Status put = store_.PutRecord(record); !put) return std::unexpected(put.error());
    e.record = record;
    return e.info;
  }
  return Fail(Code::kNotFound, "no ephemeral template is named '" + name + "'", "name");
}

Status TemplateRegistry::Release(const std::string& name) {
  std::lock_guard lock(mu_);
  for (auto it = ephemeral_.begin(); it != ephemeral_.end(); ++it) {
    if (it->info.name != name) continue;
    if (Status put = Persist(*it, true, "released", "released by its pipeline"); !put) return put;
    ephemeral_.erase(it);
    return {};
  }
  return Fail(Code::kNotFound, "no ephemeral template is named '" + name + "'", "name");
}

std::vector<EphemeralInfo> TemplateRegistry::Ephemeral() const {
  std::lock_guard lock(mu_);
  std::vector<EphemeralInfo> out;
  for (const Registered& e : ephemeral_) out.push_back(e.info);
  return out;
}

std::vector<std::string> TemplateRegistry::Expire(const std::set<std::string>& in_use) {
  std::lock_guard lock(mu_);
  const int64_t now = Now();
  std::vector<std::string> ended;
  for (auto it = ephemeral_.begin(); it != ephemeral_.end();) {
    if (in_use.contains(it->info.name)) {
      it->info.expires_at = std::max(it->info.expires_at, now + it->ttl.count());
      ++it;
      continue;
    }
    if (it->info.expires_at > now) {
      ++it;
      continue;
    }
    if (Persist(*it, true, "released",
                "unused for its TTL of " + std::to_string(it->ttl.count()) + " s")) {
      ended.push_back(it->info.name);
      it = ephemeral_.erase(it);
    } else {
      ++it;  // the store refused: try again next pass
    }
  }
  return ended;
}

}  // namespace slurmfleet::fleet
