// Overrides of configuration values from outside the file: SLURMFLEET_* environment variables
// (which override the file) and `--set path=value` flags (which override both). Each override
// names a key path in the file's terms; list elements are selected by their `name`:
//   --set jenkins.clouds.local.jenkinsUrl=http://jenkins:8080/
//   --set jenkins.clouds.local.jobTemplates.cpu.cpusPerTask=8
// Pure functions; the caller passes the environment in (tests never touch the real one).
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "config/diagnostic.h"

namespace slurmfleet::config {

struct Override {
  std::string path;    // "batch.partition", "jenkins.clouds.local.maxAgents"
  std::string value;   // as it would be written in YAML, unquoted
  std::string source;  // "environment SLURMFLEET_SLURM_PARTITION", "--set batch.partition=gpu"
  bool operator==(const Override&) const = default;
};

// One environment variable and the key it sets.
struct EnvironmentKey {
  std::string_view variable;  // "SLURMFLEET_SLURM_PARTITION"
  std::string_view path;      // "batch.partition"
};
// Every variable slurmfleet reads: the batch-run side (one for each TUNEPLANE_* variable of the
// batch backend, renamed) and the daemon.
std::span<const EnvironmentKey> EnvironmentKeys();

// The overrides the given environment asks for, in EnvironmentKeys() order. Variables that are
// not in EnvironmentKeys() are ignored (SLURMFLEET_CONFIG, for one, is read by the CLI).
std::vector<Override> OverridesFromEnvironment(const std::map<std::string, std::string>& env);

// The SLURMFLEET_* entries of a NAME=VALUE environment block (the `environ` of main), for
// OverridesFromEnvironment. Only the composition root passes the real environment.
std::map<std::string, std::string> SlurmfleetVariables(const char* const* envp);

// The environment's overrides followed by the --set flags', in the order they apply. kInvalidInput
// for a malformed --set flag.
Result<std::vector<Override>> CollectOverrides(const std::map<std::string, std::string>& env,
                                               const std::vector<std::string>& set_flags);

// "path=value" from a --set flag. kInvalidInput when there is no '=' or the path is empty.
Result<Override> ParseSetFlag(std::string_view flag);

// Applies `o` to the document. Missing mappings on the way are created; a list element is found
// by its `name` (for clouds, by `slurm.name`) or by its index. Setting one Slurm credential source
// (jwtFile, jwtEnv, jwtKeyFile) removes the others beside it, so an override replaces the
// source instead of conflicting with it. Returns the node that now holds the value; kInvalidInput
// (where = o.source) when the path leads through a scalar or to a missing list element.
Result<YAML::Node> ApplyOverride(YAML::Node& root, const Override& o);

}  // namespace slurmfleet::config
