#include "config/overrides.h"

#include <array>
#include <charconv>

#include "base/utf8.h"

namespace slurmfleet::config {
namespace {

constexpr std::array<EnvironmentKey, 19> kEnvironmentKeys{{
    {"SLURMFLEET_SLURM_REST_URL", "batch.restUrl"},
    {"SLURMFLEET_SLURM_REST_API_VERSION", "batch.apiVersion"},
    {"SLURMFLEET_SLURM_REST_USER", "batch.credentials.user"},
    {"SLURMFLEET_SLURM_JWT_FILE", "batch.credentials.jwtFile"},
    {"SLURMFLEET_SLURM_JWT_ENV", "batch.credentials.jwtEnv"},
    {"SLURMFLEET_SLURM_JWT_KEY_FILE", "batch.credentials.jwtKeyFile"},
    {"SLURMFLEET_SLURM_PARTITION", "batch.partition"},
    {"SLURMFLEET_SLURM_RUNTIME_PROFILE", "batch.runtimeProfile"},
    {"SLURMFLEET_STORAGE_ROOT", "batch.storageRoot"},
    {"SLURMFLEET_SLURM_STORAGE_ROOT", "batch.clusterStorageRoot"},
    {"SLURMFLEET_SLURM_TLS_VERIFY", "batch.tlsVerify"},
    {"SLURMFLEET_RUNTIME_REGISTRY_FILE", "batch.runtimeRegistryFile"},
    {"SLURMFLEET_JENKINS_URL", "jenkins.url"},
    {"SLURMFLEET_AGENT_TIMEOUT_MINUTES", "jenkins.agentTimeoutMinutes"},
    {"SLURMFLEET_LISTEN", "daemon.listen"},
    {"SLURMFLEET_STATE_FILE", "daemon.stateFile"},
    {"SLURMFLEET_API_TOKENS_FILE", "daemon.apiTokensFile"},
    {"SLURMFLEET_INSTANCE", "daemon.instance"},
    {"SLURMFLEET_LOG_LEVEL", "daemon.logLevel"},
}};

constexpr std::string_view kCredentialSources[] = {"jwtFile", "jwtEnv", "jwtKeyFile"};

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    out.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

bool HasName(const YAML::Node& element, const std::string& name) {
  return element.IsMap() && element["name"] && element["name"].IsScalar() &&
         element["name"].Scalar() == name;
}

}  // namespace

std::span<const EnvironmentKey> EnvironmentKeys() { return kEnvironmentKeys; }

std::vector<Override> OverridesFromEnvironment(const std::map<std::string, std::string>& env) {
  std::vector<Override> out;
  for (const EnvironmentKey& k : kEnvironmentKeys) {
    auto it = env.find(std::string(k.variable));
    if (it == env.end()) continue;
    out.push_back(
        Override{std::string(k.path), it->second, "environment " + std::string(k.variable)});
  }
  return out;
}

std::map<std::string, std::string> SlurmfleetVariables(const char* const* envp) {
  std::map<std::string, std::string> out;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    std::string_view entry(*envp);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || !entry.starts_with("SLURMFLEET_")) continue;
    out.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

Result<std::vector<Override>> CollectOverrides(const std::map<std::string, std::string>& env,
                                               const std::vector<std::string>& set_flags) {
  std::vector<Override> out = OverridesFromEnvironment(env);
  for (const std::string& flag : set_flags) {
    Result<Override> o = ParseSetFlag(flag);
    if (!o) return std::unexpected(o.error());
    out.push_back(*std::move(o));
  }
  return out;
}

Result<Override> ParseSetFlag(std::string_view flag) {
  const size_t eq = flag.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    // Not quoted: a token pasted here by mistake would be printed.
    return Fail(Code::kInvalidInput,
                eq == 0 ? "a --set flag has no PATH before its '='; e.g. --set batch.partition=gpu"
                        : "a --set flag has no '=' (not shown here: it may be a value); write "
                          "PATH=VALUE, e.g. --set batch.partition=gpu",
                "--set");
  }
  // The source names the path only: the value may be a secret, and is shown where it is wrong.
  const std::string_view path = flag.substr(0, eq);
  return Override{std::string(path), std::string(flag.substr(eq + 1)),
                  "--set " + RepairUtf8(path) + "=…"};
}

Result<YAML::Node> ApplyOverride(YAML::Node& root, const Override& o) {
  const std::vector<std::string> segments = Split(o.path);
  for (const std::string& s : segments) {
    if (s.empty()) {
      return Fail(Code::kInvalidInput, "'" + o.path + "' has an empty segment", o.source);
    }
  }
  if (!root.IsDefined() || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  YAML::Node current = root;
  std::string walked;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const std::string& seg = segments[i];
    walked += (walked.empty() ? "" : ".") + seg;
    YAML::Node next(YAML::NodeType::Undefined);
    if (current.IsSequence()) {
      for (size_t j = 0; j < current.size() && !next.IsDefined(); ++j) {
        YAML::Node element = current[j];
        if (HasName(element, seg)) next.reset(element);
        // A JCasC cloud entry is {slurm: {name: ...}}: select it by the inner name.
        if (element.IsMap() && HasName(element["slurm"], seg)) next.reset(element["slurm"]);
      }
      size_t index = 0;
      auto [end, ec] = std::from_chars(seg.data(), seg.data() + seg.size(), index);
      if (!next.IsDefined() && ec == std::errc() && end == seg.data() + seg.size() &&
          index < current.size()) {
        next.reset(current[index]);
      }
      if (!next.IsDefined()) {
        return Fail(Code::kInvalidInput,
                    "no list element named '" + seg + "' at " + walked +
                        "; name an existing element or give its index",
                    o.source);
      }
    } else if (current.IsMap() || current.IsNull()) {
      if (current.IsNull()) current = YAML::Node(YAML::NodeType::Map);
      next.reset(current[seg]);
      if (!next.IsDefined() || next.IsNull()) {
        current[seg] = YAML::Node(YAML::NodeType::Map);
        next.reset(current[seg]);
      }
    } else {
      return Fail(Code::kInvalidInput,
                  walked + " is a single value or a list, so '" + o.path + "' cannot go inside it",
                  o.source);
    }
    current.reset(next);
  }
  if (!current.IsMap()) {
    return Fail(Code::kInvalidInput,
                walked + " is a single value or a list, so '" + o.path + "' cannot go inside it",
                o.source);
  }
  const std::string& key = segments.back();
  for (std::string_view source : kCredentialSources) {
    if (key == source) {
      for (std::string_view other : kCredentialSources) {
        if (other != source) current.remove(std::string(other));
      }
    }
  }
  current[key] = o.value;
  return current[key];
}

}  // namespace slurmfleet::config
