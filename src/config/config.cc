#include "config/config.h"

#include <arpa/inet.h>
#include <yaml-cpp/depthguard.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "base/read_file.h"
#include "base/url.h"
#include "config/yaml_reader.h"
#include "fleet/job_tag.h"
#include "jenkins/label_expression.h"
#include "launch/agent_name.h"
#include "slurm/dialect.h"
#include "slurm/job.h"
#include "spec/job_desc_schema.h"
#include "spec/job_object.h"
#include "spec/resolve.h"

namespace slurmfleet::config {
namespace {

using spec::JobTemplate;

constexpr const char* kInlineSecretFix =
    "credentials are never written inline: put the token in a file only slurmfleet can read and "
    "set jwtFile to its path (or use jwtEnv / jwtKeyFile)";

std::vector<const spec::JobDescSchema*> SchemasFor(std::string_view api_version) {
  std::vector<const spec::JobDescSchema*> out;
  if (const spec::JobDescSchema* s = spec::FindJobDescSchema(api_version)) {
    out.push_back(s);
    return out;
  }
  // "auto", or an unknown version (reported on its own): accept what any version accepts.
  for (const spec::JobDescSchema& s : spec::AllJobDescSchemas()) out.push_back(&s);
  return out;
}

// Reads a required string; reports its absence at the enclosing mapping.
std::string Required(MapReader& r, std::string_view key, std::string fix) {
  std::optional<std::string> v = r.String(key);
  if (!v) {
    if (!r.node()[std::string(key)]) {
      r.sink().Report(r.node(), r.PathOf(key), "'" + std::string(key) + "' is required",
                      std::move(fix));
    }
    return {};
  }
  if (v->empty()) {
    r.sink().Report(r.node()[std::string(key)], r.PathOf(key), "must not be empty", std::move(fix));
  }
  return *v;
}

// `example` is a URL of the kind the key wants, quoted in the fix.
void CheckUrl(MapReader& r, std::string_view key, const std::string& value,
              std::string_view example) {
  if (value.empty()) return;
  if (std::optional<UrlProblem> problem = CheckBaseUrl(value, example)) {
    r.sink().Report(r.node()[std::string(key)], r.PathOf(key), std::move(problem->message),
                    std::move(problem->fix));
  }
}

// slurmrestd also listens on local sockets, named as on its own command line: unix:/path.
void CheckSlurmUrl(MapReader& r, std::string_view key, const std::string& value) {
  if (value.starts_with("unix:/")) return;
  if (value.starts_with("unix:")) {
    r.sink().Report(
        r.node()[std::string(key)], r.PathOf(key),
        "'" + WithoutUserinfo(value) + "' does not name the socket by its absolute path",
        "write unix:/path/to/slurmrestd.socket, as on slurmrestd's command line");
    return;
  }
  CheckUrl(r, key, value, "http://slurmrestd.example.org:6820");
}

void CheckAbsolute(MapReader& r, std::string_view key, const std::optional<std::string>& value) {
  if (value && !value->starts_with("/")) {
    r.sink().Report(r.node()[std::string(key)], r.PathOf(key),
                    "'" + *value + "' is not an absolute path", "write a path starting with /");
  }
}

// For the keys that name where a secret is: a token pasted there by mistake is not echoed.
void CheckSecretPath(MapReader& r, std::string_view key, const std::optional<std::string>& value) {
  if (value && !value->starts_with("/")) {
    r.sink().Report(r.node()[std::string(key)], r.PathOf(key),
                    "not an absolute path (the value is not shown: it may be a secret)",
                    "write the path of the file that holds the secret, starting with /; never "
                    "the secret itself");
  }
}

std::string ApiVersion(MapReader& r, std::string_view key, std::string fallback, bool allow_auto) {
  std::optional<std::string> v = r.String(key);
  if (!v) return fallback;
  if ((allow_auto && *v == kAutoApiVersion) || slurm::FindDialect(*v) != nullptr) return *v;
  r.sink().Report(r.node()[std::string(key)], r.PathOf(key),
                  "'" + *v + "' is not an API version slurmfleet speaks",
                  std::string("use ") + (allow_auto ? "auto or " : "") + "one of " +
                      slurm::SupportedVersions());
  return fallback;
}

SlurmCredentials DecodeCredentials(MapReader& parent) {
  SlurmCredentials c;
  YAML::Node n = parent.Child("credentials");
  if (!n.IsDefined()) {
    parent.sink().Report(parent.node(), parent.PathOf("credentials"), "no Slurm credentials",
                         "add credentials: {user: ci, jwtFile: /path/to/token}");
    return c;
  }
  MapReader r(n, parent.PathOf("credentials"), parent.sink());
  c.user = r.String("user").value_or("");
  std::optional<std::string> file = r.String("jwtFile");
  std::optional<std::string> env = r.String("jwtEnv");
  std::optional<std::string> key = r.String("jwtKeyFile");
  if (auto s = r.Int("tokenLifetimeSeconds", 60, 7 * 86400)) {
    c.token_lifetime_seconds = static_cast<int>(*s);
  }
  for (const char* inline_key : {"token", "jwt", "password", "secret", "slurmJwt"}) {
    r.HintForUnknown(inline_key, kInlineSecretFix);
  }
  std::vector<std::string> set;
  if (file) set.push_back("jwtFile");
  if (env) set.push_back("jwtEnv");
  if (key) set.push_back("jwtKeyFile");
  if (set.empty()) {
    r.sink().Report(n, r.path(), "no token source",
                    "set exactly one of jwtFile (a token file), jwtEnv (a variable such as "
                    "SLURM_JWT) or jwtKeyFile (Slurm's jwt_key, to mint tokens)");
  } else if (set.size() > 1) {
    r.sink().Report(n[set[1]], r.PathOf(set[1]), "both " + set[0] + " and " + set[1] + " are set",
                    "keep exactly one token source");
  }
  if (file) {
    c.source = SlurmCredentials::Source::kTokenFile;
    c.token_file = *file;
    CheckSecretPath(r, "jwtFile", file);
  } else if (env) {
    c.source = SlurmCredentials::Source::kEnvironment;
    c.token_env = *env;
    c.token_env_key = r.PathOf("jwtEnv");
    if (!spec::CheckEnvironmentName(*env).empty() && !env->starts_with("SLURMFLEET_")) {
      r.sink().Report(n["jwtEnv"], r.PathOf("jwtEnv"),
                      "not a variable name (the value is not shown: it may be a secret)",
                      "write the name of the variable that holds the token, such as SLURM_JWT");
    }
  } else if (key) {
    c.source = SlurmCredentials::Source::kMintFromKey;
    c.jwt_key_file = *key;
    CheckSecretPath(r, "jwtKeyFile", key);
    if (c.user.empty()) {
      r.sink().Report(n, r.PathOf("user"), "minting a token needs the user it is for",
                      "add user: ci (the Slurm user the agents run as)");
    }
  }
  r.Finish();
  return c;
}

void DecodeNative(MapReader& parent, std::string_view key, spec::NativeLaunch& out) {
  YAML::Node n = parent.Child(key);
  if (!n.IsDefined()) return;
  MapReader r(n, parent.PathOf(key), parent.sink());
  out.java_path = r.String("javaPath");
  out.jar_path = r.String("jarPath");
  out.download_jar = r.Bool("downloadJar");
  out.setup_script = r.String("setupScript");
  r.Finish();
}

void DecodeEnvironment(MapReader& r, std::map<std::string, std::string>& out) {
  std::optional<std::map<std::string, std::string>> env = r.StringMap("environment");
  if (!env) return;
  for (const auto& [name, value] : *env) {
    if (std::string why = spec::CheckEnvironmentName(name); !why.empty()) {
      r.sink().Report(NodeAtJsonPath(r.node(), "t.environment." + name),
                      r.PathOf("environment") + "." + name, why);
      continue;
    }
    out[name] = value;
  }
}

// Reports a field given both as a template key and inside the raw `job` block.
template <typename T>
void NoTwice(MapReader& r, const std::optional<T>& typed, const std::optional<T>& raw,
             std::string_view key, std::string_view job_key) {
  if (typed && raw) {
    r.sink().Report(NodeAtJsonPath(r.node(), "t.job." + std::string(job_key)),
                    r.PathOf("job") + "." + std::string(job_key),
                    "set both here and as '" + std::string(key) + "'",
                    "keep only '" + std::string(key) + "'");
  }
}

// Each space-separated word of a template's `label` must be one label name: a build asks for
// labels through Jenkins' label parser, and a word that parser does not read as that one label
// (`linux||x`, `!x`, `lin(ux`) names a label no build can ask for.
void CheckLabelNames(MapReader& r, const std::string& label) {
  std::istringstream words(label);  // split as spec::Resolve splits it
  for (std::string word; words >> word;) {
    Result<jenkins::LabelExpression> parsed = jenkins::LabelExpression::Parse(word);
    // The parsed expression's atoms are parts of `word` (or, quoted, shorter): it holds for a node
    // with the label `word` and not for a node with none only when it is that one atom.
    if (parsed && parsed->Matches({word}) && !parsed->Matches({})) continue;
    r.sink().Report(
        r.node()["label"], r.PathOf("label"),
        "'" + word + "' is not a label name: " +
            (parsed ? std::string("a build's label would read it as an expression, "
                                  "not as this one label")
                    : "a build's label cannot hold it (" + parsed.error().message + ")"),
        "`label` lists names separated by spaces; the expression (&&, ||, !) belongs "
        "in the build's label");
  }
}

JobTemplate DecodeTemplate(const YAML::Node& n, const std::string& path, DiagnosticSink& sink,
                           spec::SchemaSet schemas) {
  JobTemplate t;
  MapReader r(n, path, sink);
  t.name = Required(r, "name", "name the template, e.g. name: cpu");
  if (!t.name.empty()) {
    if (Status s = launch::ValidateName("template name", t.name); !s) {
      sink.Report(n["name"], r.PathOf("name"), s.error().message);
    }
  }
  t.inherit_from =
      r.StringList("inheritFrom", /*allow_single=*/true).value_or(std::vector<std::string>{});
  t.label = r.String("label");
  if (t.label) CheckLabelNames(r, *t.label);
  t.job.partition = r.String("partition");
  t.default_partition = r.String("defaultPartition");
  // the ranges of the job's JSON fields too, so a stored agent request always reads back
  if (auto v = r.Int("cpusPerTask", slurm::kCountRange.min, slurm::kCountRange.max)) {
    t.job.cpus_per_task = static_cast<int32_t>(*v);
  }
  if (auto v = r.Int("memoryPerNode", slurm::kMemoryMbRange.min, slurm::kMemoryMbRange.max)) {
    t.job.memory_per_node_mb = static_cast<uint64_t>(*v);
  }
  if (auto v = r.Int("timeLimit", slurm::kTimeLimitRange.min, slurm::kTimeLimitRange.max)) {
    t.job.time_limit_minutes = static_cast<uint32_t>(*v);
  }
  t.job.tres_per_job = r.String("tresPerJob");
  if (auto v = r.Int("instanceCap", 1, 100000)) t.instance_cap = static_cast<int>(*v);
  if (auto v = r.Int("idleMinutes", 0, 7 * 24 * 60)) t.idle_minutes = static_cast<int>(*v);
  if (auto v = r.String("nodeUsageMode")) {
    if (*v == "NORMAL") {
      t.node_usage_mode = spec::NodeUsageMode::kNormal;
    } else if (*v == "EXCLUSIVE") {
      t.node_usage_mode = spec::NodeUsageMode::kExclusive;
    } else {
      sink.Report(n["nodeUsageMode"], r.PathOf("nodeUsageMode"),
                  "'" + *v + "' is not a node usage mode", "write NORMAL or EXCLUSIVE");
    }
  }
  if (auto v = r.Int("agentTimeoutMinutes", 1, 24 * 60)) {
    t.agent_timeout_minutes = static_cast<int>(*v);
  }
  if (auto v = r.Int("noReconnectAfterMinutes", 1, 24 * 60)) {
    t.no_reconnect_after_minutes = static_cast<int>(*v);
  }
  t.job.current_working_directory = r.String("workingDirectory");
  CheckAbsolute(r, "workingDirectory", t.job.current_working_directory);
  DecodeNative(r, "agentLaunch", t.agent);
  if (YAML::Node p = r.Child("pyxis"); p.IsDefined()) {
    MapReader pr(p, r.PathOf("pyxis"), sink);
    spec::PyxisLaunch x;
    x.container_image = pr.String("containerImage");
    x.container_mount_home = pr.Bool("containerMountHome");
    x.container_mounts = pr.String("containerMounts");
    x.container_workdir = pr.String("containerWorkdir");
    x.container_writable = pr.Bool("containerWritable");
    x.container_remap = pr.Bool("containerRemap");
    x.container_name = pr.String("containerName");
    pr.Finish();
    t.pyxis = x;
  }
  if (YAML::Node a = r.Child("apptainer"); a.IsDefined()) {
    MapReader ar(a, r.PathOf("apptainer"), sink);
    spec::ApptainerLaunch x;
    x.image = ar.String("image");
    x.binds = ar.StringList("binds", /*allow_single=*/false);
    x.java_path = ar.String("javaPath");
    x.jar_path = ar.String("jarPath");
    ar.Finish();
    t.apptainer = x;
  }
  t.custom_script = r.String("customScript");
  DecodeEnvironment(r, t.environment);
  if (YAML::Node job = r.Child("job"); job.IsDefined()) {
    JobTemplate raw;
    std::vector<Error> problems;
    spec::DecodeJobObject(YamlToJson(job), "job", schemas, raw, problems);
    for (const Error& e : problems) {
      sink.Report(NodeAtJsonPath(job, e.where), path + "." + e.where, e.message);
    }
    NoTwice(r, t.job.partition, raw.job.partition, "partition", "partition");
    NoTwice(r, t.job.cpus_per_task, raw.job.cpus_per_task, "cpusPerTask", "cpus_per_task");
    NoTwice(r, t.job.memory_per_node_mb, raw.job.memory_per_node_mb, "memoryPerNode",
            "memory_per_node");
    // Slurm takes one memory request: memoryPerNode beside a per-CPU or per-GPU one is two
    for (const char* other : {"memory_per_cpu", "memory_per_tres"}) {
      if (t.job.memory_per_node_mb && raw.job.extra.contains(other)) {
        r.sink().Report(NodeAtJsonPath(r.node(), "t.job." + std::string(other)),
                        r.PathOf("job") + "." + other,
                        "asks for memory a second way beside 'memoryPerNode'; Slurm takes one "
                        "(per node, per CPU or per GPU)",
                        "keep only one of them");
      }
    }
    NoTwice(r, t.job.time_limit_minutes, raw.job.time_limit_minutes, "timeLimit", "time_limit");
    NoTwice(r, t.job.tres_per_job, raw.job.tres_per_job, "tresPerJob", "tres_per_job");
    NoTwice(r, t.job.current_working_directory, raw.job.current_working_directory,
            "workingDirectory", "current_working_directory");
    for (const auto& [name, value] : raw.environment) {
      if (t.environment.contains(name)) {
        sink.Report(NodeAtJsonPath(job, "job.environment"), path + ".job.environment",
                    "'" + name + "' is set both here and in 'environment'",
                    "keep it only in 'environment'");
      }
    }
    // The typed template keys were read into `t`; the raw block fills what they leave unset.
    t = spec::Overlay(raw, t);
  }
  r.Finish();
  return t;
}

Cloud DecodeCloud(const YAML::Node& n, const std::string& path, DiagnosticSink& sink) {
  Cloud c;
  MapReader r(n, path, sink);
  c.name = Required(r, "name", "name the cloud, e.g. name: local");
  if (!c.name.empty()) {
    if (Status s = launch::ValidateName("cloud name", c.name); !s) {
      sink.Report(n["name"], r.PathOf("name"), s.error().message);
    }
  }
  c.slurm_rest_api_url =
      Required(r, "slurmRestApiUrl", "set the slurmrestd base URL, e.g. http://127.0.0.1:6820");
  CheckSlurmUrl(r, "slurmRestApiUrl", c.slurm_rest_api_url);
  c.api_version = ApiVersion(r, "apiVersion", std::string(kAutoApiVersion), /*allow_auto=*/true);
  c.tls_verify = r.Bool("tlsVerify").value_or(true);
  std::optional<std::string> ca = r.String("caFile");
  CheckAbsolute(r, "caFile", ca);
  c.ca_file = ca.value_or("");
  c.credentials = DecodeCredentials(r);
  r.HintForUnknown("credentialsId",
                   "slurmfleet reads the JWT itself instead of a Jenkins credential: replace "
                   "credentialsId with credentials: {user: ci, jwtFile: /path/to/token}");
  if (auto url = r.String("jenkinsUrl")) {
    c.jenkins_url = *url;
    CheckUrl(r, "jenkinsUrl", c.jenkins_url, "https://jenkins.example.org/");
    if (!c.jenkins_url.empty() && !c.jenkins_url.ends_with("/")) c.jenkins_url += "/";
  }
  r.HintForUnknown("jenkinsCredentials",
                   "slurmfleet talks to one Jenkins: move this block to jenkins.credentials "
                   "(beside jenkins.url and jenkins.clouds)");
  c.defaults.default_partition = r.String("defaultPartition");
  if (auto v = r.Int("maxAgents", 1, 100000)) c.max_agents = static_cast<int>(*v);
  if (auto v = r.Int("agentTimeoutMinutes", 1, 24 * 60)) {
    c.defaults.agent_timeout_minutes = static_cast<int>(*v);
  }
  c.authorized_folders = r.StringList("authorizedFolders", /*allow_single=*/false)
                             .value_or(std::vector<std::string>{});
  DecodeNative(r, "defaultAgentLaunch", c.defaults.agent);
  DecodeEnvironment(r, c.defaults.environment);

  const std::vector<const spec::JobDescSchema*> schemas = SchemasFor(c.api_version);
  YAML::Node templates = r.Child("jobTemplates");
  std::vector<YAML::Node> template_nodes;
  if (templates.IsDefined() && !templates.IsNull() && !templates.IsSequence()) {
    sink.Report(templates, r.PathOf("jobTemplates"), "expected a list of job templates",
                "start each template with '- name: ...'");
  } else if (templates.IsSequence()) {
    for (size_t i = 0; i < templates.size(); ++i) {
      const std::string tpath = r.PathOf("jobTemplates") + "[" + std::to_string(i) + "]";
      c.job_templates.push_back(DecodeTemplate(templates[i], tpath, sink, schemas));
      template_nodes.push_back(templates[i]);
    }
  }
  r.Finish();

  // Whole-cloud checks: unique names, then every template resolved as it will be rendered.
  std::set<std::string> names;
  for (size_t i = 0; i < c.job_templates.size(); ++i) {
    const std::string& name = c.job_templates[i].name;
    const std::string tpath = r.PathOf("jobTemplates") + "[" + std::to_string(i) + "]";
    if (name.empty()) continue;
    if (!names.insert(name).second) {
      sink.Report(template_nodes[i]["name"], tpath + ".name",
                  "another template of this cloud is already named '" + name + "'",
                  "give each template its own name");
      continue;
    }
    if (Status s = launch::ValidateNamesTogether(c.name, name); !s) {
      sink.Report(template_nodes[i]["name"], tpath + ".name", s.error().message,
                  "shorten the cloud's or the template's name");
    }
    Result<spec::ResolvedTemplate> resolved = spec::Resolve(c.defaults, c.job_templates, name);
    if (resolved) continue;
    const Error& e = resolved.error();
    const std::string prefix = "templates." + name + ".";
    std::string suffix = e.where.starts_with(prefix) ? e.where.substr(prefix.size()) : "";
    sink.Report(
        suffix.empty() ? template_nodes[i] : NodeAtJsonPath(template_nodes[i], "t." + suffix),
        suffix.empty() ? tpath : tpath + "." + suffix, e.message);
  }
  return c;
}

BatchConfig DecodeBatch(const YAML::Node& n, DiagnosticSink& sink) {
  BatchConfig b;
  MapReader r(n, "batch", sink);
  b.rest_url = Required(r, "restUrl", "set the slurmrestd base URL, e.g. https://slurmrestd:6820");
  CheckSlurmUrl(r, "restUrl", b.rest_url);
  b.api_version = ApiVersion(r, "apiVersion", b.api_version, /*allow_auto=*/false);
  b.tls_verify = r.Bool("tlsVerify").value_or(true);
  std::optional<std::string> ca = r.String("caFile");
  CheckAbsolute(r, "caFile", ca);
  b.ca_file = ca.value_or("");
  b.credentials = DecodeCredentials(r);
  b.partition = Required(r, "partition", "the partition batch runs go to, e.g. partition: gpu");
  if (auto p = r.String("runtimeProfile")) {
    if (*p == "enroot-pyxis") {
      b.runtime_profile = RuntimeProfile::kEnrootPyxis;
    } else if (*p == "apptainer") {
      b.runtime_profile = RuntimeProfile::kApptainer;
    } else {
      sink.Report(n["runtimeProfile"], r.PathOf("runtimeProfile"),
                  "'" + *p + "' is not a runtime profile", "write enroot-pyxis or apptainer");
    }
  }
  b.storage_root = Required(r, "storageRoot",
                            "set the shared storage root, e.g. storageRoot: /lustre/slurmfleet");
  CheckAbsolute(r, "storageRoot",
                b.storage_root.empty() ? std::nullopt : std::optional(b.storage_root));
  std::optional<std::string> cluster = r.String("clusterStorageRoot");
  CheckAbsolute(r, "clusterStorageRoot", cluster);
  b.cluster_storage_root = cluster.value_or(b.storage_root);
  std::optional<std::string> registry = r.String("runtimeRegistryFile");
  CheckAbsolute(r, "runtimeRegistryFile", registry);
  b.runtime_registry_file = registry.value_or("");
  r.Finish();
  return b;
}

// jenkins.url and its siblings; nullopt when there is no jenkins.url (no provisioning).
std::optional<JenkinsConfig> DecodeJenkins(MapReader& r, DiagnosticSink& sink) {
  std::optional<std::string> url = r.String("url");
  YAML::Node creds = r.Child("credentials");
  JenkinsConfig j;
  j.tls_verify = r.Bool("tlsVerify").value_or(true);
  std::optional<std::string> ca = r.String("caFile");
  CheckAbsolute(r, "caFile", ca);
  j.ca_file = ca.value_or("");
  if (auto v = r.Int("pollMs", 200, 600000)) j.poll_ms = static_cast<int>(*v);
  if (auto v = r.Int("agentTimeoutMinutes", 1, 24 * 60))
    j.agent_timeout_minutes = static_cast<int>(*v);
  if (auto v = r.Int("ephemeralTemplateTtlSeconds", 60, 7 * 24 * 3600)) {
    j.ephemeral_ttl_seconds = static_cast<int>(*v);
  }
  if (!url) {
    // every key beside url is about the Jenkins it names: alone, it would silently do nothing
    for (const char* key : {"credentials", "tlsVerify", "caFile", "pollMs", "agentTimeoutMinutes",
                            "ephemeralTemplateTtlSeconds"}) {
      if (r.node()[key]) {
        sink.Report(r.node()[key], std::string("jenkins.") + key,
                    "has no effect without jenkins.url (no agents are provisioned)",
                    "set jenkins.url to the Jenkins to provision for, or remove this key");
      }
    }
    return std::nullopt;
  }
  j.url = *url;
  if (j.url.empty()) {
    sink.Report(
        r.node()["url"], "jenkins.url", "must not be empty",
        "write the Jenkins URL slurmfleet uses, e.g. http://jenkins:8080/, or remove the key");
  }
  CheckUrl(r, "url", j.url, "https://jenkins.example.org/");
  if (!j.url.empty() && !j.url.ends_with("/")) j.url += "/";
  if (!creds.IsDefined()) {
    sink.Report(r.node(), "jenkins.credentials", "jenkins.url is set but no credentials are",
                "add credentials: {user: <jenkins user>, apiTokenFile: /path/to/api-token}");
    return j;
  }
  MapReader cr(creds, "jenkins.credentials", sink);
  j.credentials.user = Required(cr, "user", "the Jenkins user slurmfleet acts as");
  j.credentials.api_token_file =
      Required(cr, "apiTokenFile", "a file holding that user's API token");
  CheckSecretPath(cr, "apiTokenFile",
                  j.credentials.api_token_file.empty()
                      ? std::nullopt
                      : std::optional(j.credentials.api_token_file));
  for (const char* inline_key : {"apiToken", "token", "password"}) {
    cr.HintForUnknown(inline_key,
                      "credentials are never written inline: put the API token in a file and "
                      "set apiTokenFile to its path");
  }
  cr.Finish();
  return j;
}

// What keeps `host` from being the host of daemon.listen, which would otherwise show only when
// serve starts: a DNS name, an IPv4 address or an IPv6 address in brackets. nullopt when it is one.
std::optional<std::string> ListenHostProblem(const std::string& host) {
  if (host.starts_with('[')) {
    if (!host.ends_with(']')) return "the IPv6 address has no ']' closing it";
    const std::string inside = host.substr(1, host.size() - 2);
    in6_addr address{};
    if (inet_pton(AF_INET6, inside.c_str(), &address) != 1) {
      return "'" + host + "' does not hold an IPv6 address";
    }
    return std::nullopt;
  }
  if (host.find(':') != std::string::npos) {
    return "'" + host + "' holds ':'; an IPv6 address goes in brackets";
  }
  // The resolver reads a name of digits and dots as an IPv4 address, however many parts it has.
  if (host.find_first_not_of("0123456789.") == std::string::npos) {
    in_addr address{};
    if (inet_pton(AF_INET, host.c_str(), &address) != 1) {
      return "'" + host + "' is not an IPv4 address (four numbers from 0 to 255, separated by '.')";
    }
    return std::nullopt;
  }
  const std::string not_a_name =
      "'" + host + "' is not a host name (parts of letters, digits, '-' and '_', separated by '.')";
  if (host.size() > 253) return not_a_name;
  size_t start = 0;
  while (start <= host.size()) {
    size_t end = host.find('.', start);
    if (end == std::string::npos) end = host.size();
    const std::string_view part = std::string_view(host).substr(start, end - start);
    if (part.empty() || part.size() > 63 || part.front() == '-' || part.back() == '-') {
      return not_a_name;
    }
    for (char c : part) {
      // '_' too: container networks name hosts so, and the resolver takes it
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return not_a_name;
    }
    start = end + 1;
  }
  return std::nullopt;
}

DaemonConfig DecodeDaemon(const YAML::Node& n, DiagnosticSink& sink) {
  DaemonConfig d;
  MapReader r(n, "daemon", sink);
  if (auto listen = r.String("listen")) {
    const size_t colon = listen->rfind(':');
    int port = 0;
    const std::string port_text = colon == std::string::npos ? "" : listen->substr(colon + 1);
    std::istringstream in(port_text);
    if (colon == std::string::npos || colon == 0 || !(in >> port) || !in.eof() || port < 1 ||
        port > 65535) {
      sink.Report(n["listen"], r.PathOf("listen"), "'" + *listen + "' is not HOST:PORT",
                  "write e.g. 127.0.0.1:8470");
    } else if (std::optional<std::string> problem = ListenHostProblem(listen->substr(0, colon))) {
      sink.Report(n["listen"], r.PathOf("listen"), "'" + *listen + "': " + *problem,
                  "write e.g. 127.0.0.1:8470 or localhost:8470");
    } else {
      d.listen = *listen;
    }
  }
  if (auto state = r.String("stateFile")) {
    if (state->empty()) {
      sink.Report(n["stateFile"], r.PathOf("stateFile"), "must not be empty",
                  "write a path, e.g. /var/lib/slurmfleet/state.db");
    } else {
      d.state_file = *state;
    }
  }
  if (auto tokens = r.String("apiTokensFile")) d.api_tokens_file = *tokens;
  if (auto instance = r.String("instance")) {
    if (Status valid = fleet::ValidateTagPart("instance", *instance); !valid) {
      sink.Report(n["instance"], r.PathOf("instance"), valid.error().message, "e.g. prod or ci-1");
    } else {
      d.instance = *instance;
    }
  }
  if (auto v = r.Int("pollFastMs", 100, 600000)) d.poll_fast_ms = static_cast<int>(*v);
  if (auto v = r.Int("pollSlowMs", 100, 3600000)) d.poll_slow_ms = static_cast<int>(*v);
  if (auto v = r.Int("lostGraceSeconds", 1, 86400)) d.lost_grace_seconds = static_cast<int>(*v);
  if (auto v = r.Int("orphanGraceSeconds", 1, 86400)) d.orphan_grace_seconds = static_cast<int>(*v);
  if (auto v = r.Bool("partitionDownIsFatal")) d.partition_down_is_fatal = *v;
  if (auto v = r.Int("slurmTimeoutSeconds", 1, 600)) d.slurm_timeout_seconds = static_cast<int>(*v);
  if (auto v = r.Int("historyDays", 0, 36500)) d.history_days = static_cast<int>(*v);
  if (auto v = r.String("logLevel")) {
    if (*v == "info" || *v == "debug") {
      d.debug_log = *v == "debug";
    } else {
      sink.Report(n["logLevel"], r.PathOf("logLevel"), "'" + *v + "' is not a log level",
                  "write info or debug");
    }
  }
  r.Finish();
  return d;
}

}  // namespace

const Cloud* Config::FindCloud(std::string_view name) const {
  for (const Cloud& c : clouds) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

LoadResult LoadConfigText(std::string_view text, std::string_view file,
                          const std::vector<Override>& overrides) {
  LoadResult out;
  DiagnosticSink sink{std::string(file)};
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string(text));
    // A second document or an unclosed quote would lose keys silently; what was read is not
    // what was written, so nothing is decoded.
    if (!CheckText(text, sink)) {
      out.diagnostics = sink.diagnostics();
      return out;
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp says only "bad file". Its mark is where the parser gave up, at or just after
    // the deep part (the end of the file for an unclosed '['): the line, not the column, helps.
    sink.ReportAt(e.mark.line < 0 ? 0 : e.mark.line + 1, 0, "",
                  "the file nests too deeply to be read (the YAML parser stops at " +
                      std::to_string(e.depth()) + " levels; a configuration needs no more than " +
                      std::to_string(kMaxYamlDepth) + ")",
                  "look for '[' or '{' left open, or lines indented ever further, up to this line");
    out.diagnostics = sink.diagnostics();
    return out;
  } catch (const YAML::Exception& e) {
    sink.ReportAt(e.mark.line + 1, e.mark.column + 1, "", "not valid YAML: " + e.msg,
                  "check the indentation and quoting around this position");
    out.diagnostics = sink.diagnostics();
    return out;
  }
  try {
    for (const Override& o : overrides) {
      Result<YAML::Node> applied = ApplyOverride(doc, o);
      if (!applied) {
        sink.ReportFrom(o.source, o.path, applied.error().message);
        continue;
      }
      sink.AddOverrideSource(*applied, o.source);
    }
    if (!doc.IsDefined() || doc.IsNull()) {
      sink.ReportAt(1, 1, "", "the configuration is empty", "start from examples/slurmfleet.yaml");
    } else if (!doc.IsMap()) {
      // A lone value is not quoted: a token file given as --config by mistake would be shown.
      sink.Report(doc, "",
                  "the top level must be a mapping of keys (jenkins:, batch:, daemon:), but the "
                  "file holds " +
                      std::string(doc.IsSequence() ? "a list" : "a single value (not shown)"),
                  "write each top-level key at the start of its line, followed by ':', as in "
                  "examples/slurmfleet.yaml");
    } else if (CheckDocument(doc, sink)) {
      // the index in jenkins.clouds of each decoded cloud: entries that are no cloud are skipped
      std::vector<size_t> cloud_entries;
      MapReader top(doc, "", sink);
      if (YAML::Node jenkins = top.Child("jenkins"); jenkins.IsDefined()) {
        MapReader j(jenkins, "jenkins", sink);
        out.config.jenkins = DecodeJenkins(j, sink);
        YAML::Node clouds = j.Child("clouds");
        if (!clouds.IsSequence()) {
          sink.Report(clouds.IsDefined() ? clouds : jenkins, "jenkins.clouds",
                      "expected a list of clouds", "write clouds: followed by '- slurm:' entries");
        } else {
          for (size_t i = 0; i < clouds.size(); ++i) {
            const std::string path = "jenkins.clouds[" + std::to_string(i) + "]";
            MapReader e(clouds[i], path, sink);
            YAML::Node slurm = e.Child("slurm");
            if (!slurm.IsDefined()) {
              sink.Report(clouds[i], path, "a cloud entry must be a 'slurm:' mapping",
                          "write '- slurm:' and indent the cloud's keys under it");
            } else {
              out.config.clouds.push_back(DecodeCloud(slurm, path + ".slurm", sink));
              cloud_entries.push_back(i);
            }
            e.Finish();
          }
        }
        j.Finish();
      }
      if (YAML::Node batch = top.Child("batch"); batch.IsDefined()) {
        out.config.batch = DecodeBatch(batch, sink);
      }
      out.config.daemon = DecodeDaemon(top.Child("daemon"), sink);
      for (size_t i = 0; i < out.config.clouds.size(); ++i) {
        config::Cloud& cloud = out.config.clouds[i];
        if (!cloud.jenkins_url.empty()) continue;
        if (out.config.jenkins) {
          cloud.jenkins_url = out.config.jenkins->url;
        } else {
          const YAML::Node& root = doc;  // const: operator[] must not insert
          const size_t entry = cloud_entries[i];
          sink.Report(root["jenkins"]["clouds"][entry]["slurm"],
                      "jenkins.clouds[" + std::to_string(entry) + "].slurm.jenkinsUrl",
                      "no Jenkins URL for the agents of this cloud",
                      "set jenkins.url (the Jenkins slurmfleet provisions for), or jenkinsUrl "
                      "on the cloud");
        }
      }
      top.Finish();
      if (out.config.clouds.empty() && !out.config.batch) {
        sink.ReportAt(1, 1, "", "nothing to run: no jenkins.clouds and no batch section",
                      "add a cloud under jenkins.clouds, a batch section, or both");
      }
      std::set<std::string> names;
      for (size_t i = 0; i < out.config.clouds.size(); ++i) {
        const std::string& name = out.config.clouds[i].name;
        const YAML::Node& root = doc;  // const: operator[] must not insert
        const size_t entry = cloud_entries[i];
        if (!name.empty() && !names.insert(name).second) {
          sink.Report(root["jenkins"]["clouds"][entry]["slurm"]["name"],
                      "jenkins.clouds[" + std::to_string(entry) + "].slurm.name",
                      "another cloud is already named '" + name + "'",
                      "give each cloud its own name");
        } else if (name == "batch" && out.config.batch) {
          sink.Report(root["jenkins"]["clouds"][entry]["slurm"]["name"],
                      "jenkins.clouds[" + std::to_string(entry) + "].slurm.name",
                      "'batch' is the name the batch section's runs go under",
                      "give the cloud another name");
        }
      }
    }
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws on unexpected shapes we did not guard against; report, do not crash.
    sink.ReportAt(e.mark.line + 1, e.mark.column + 1, "",
                  std::string("cannot read this part of the file: ") + e.msg);
  }
  out.diagnostics = sink.diagnostics();
  return out;
}

LoadResult LoadConfigFile(const std::string& path, const std::vector<Override>& overrides) {
  // A configuration is a few KB; --config <(...) is read like a file.
  Result<std::string> text = ReadBoundedFile(path, 16 * 1024 * 1024);
  if (!text) {
    LoadResult out;
    out.diagnostics.push_back(
        Diagnostic{path, 0, 0, "", text.error().message, "check the path given to --config"});
    return out;
  }
  return LoadConfigText(*text, path, overrides);
}

Result<Config> LoadConfig(const std::string& path, const std::vector<Override>& overrides) {
  LoadResult r = LoadConfigFile(path, overrides);
  if (r.ok()) return std::move(r.config);
  std::string message = FormatDiagnostic(r.diagnostics.front());
  if (r.diagnostics.size() > 1) {
    message += " (and " + std::to_string(r.diagnostics.size() - 1) +
               " more problems; run slurmfleet validate --config " + path + ")";
  }
  return Fail(Code::kInvalidInput, std::move(message), path);
}

}  // namespace slurmfleet::config
