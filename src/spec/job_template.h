// The job template model: what to run for one Jenkins label, as written at one layer (cloud
// defaults, a YAML template, an ancestor named by inheritFrom, or pipeline JSON). Every field is
// optional at a layer; Overlay() merges two layers, and resolve.h turns the merged result into a
// ResolvedTemplate with every default applied. Plain values; no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace slurmfleet::spec {

// The Jenkins node mode: NORMAL takes any build, EXCLUSIVE only builds whose label matches.
enum class NodeUsageMode { kNormal, kExclusive };

// The job_desc part of a template. The fields slurmfleet models are typed; any other job_desc
// field lives in `extra`, already checked against the API version's schema.
struct JobFields {
  std::optional<std::string> partition;
  std::optional<std::string> account;
  std::optional<std::string> qos;
  std::optional<int32_t> cpus_per_task;
  std::optional<int32_t> tasks;
  std::optional<uint64_t> memory_per_node_mb;
  std::optional<uint32_t> time_limit_minutes;
  std::optional<std::string> tres_per_job;  // "gres/gpu:a100:1"
  std::optional<int32_t> minimum_nodes;
  std::optional<int32_t> maximum_nodes;
  std::optional<std::vector<std::string>> required_nodes;
  std::optional<std::string> constraints;
  std::optional<std::string> current_working_directory;  // the template's workingDirectory
  std::optional<std::string> standard_output;
  std::optional<std::string> standard_error;
  nlohmann::json extra = nlohmann::json::object();  // other job_desc fields, merged key by key

  bool operator==(const JobFields&) const = default;
};

// Native launch (no container): Java and agent.jar on the compute node.
struct NativeLaunch {
  std::optional<std::string> java_path;     // default "java"
  std::optional<std::string> jar_path;      // required unless download_jar
  std::optional<bool> download_jar;         // fetch {JENKINS_URL}jnlpJars/agent.jar at job start
  std::optional<std::string> setup_script;  // shell lines run before the agent starts

  bool operator==(const NativeLaunch&) const = default;
};

// Pyxis/Enroot: each field is one `srun --container-*` flag.
struct PyxisLaunch {
  std::optional<std::string> container_image;  // required: a .sqsh path or image reference
  std::optional<bool> container_mount_home;    // --container-mount-home / --no-container-mount-home
  std::optional<std::string> container_mounts;   // --container-mounts=SRC:DST[:FLAGS],...
  std::optional<std::string> container_workdir;  // --container-workdir
  std::optional<bool> container_writable;        // --container-writable / --container-readonly
  std::optional<bool> container_remap;        // --container-remap-root / --no-container-remap-root
  std::optional<std::string> container_name;  // --container-name

  bool operator==(const PyxisLaunch&) const = default;
};

// Apptainer: `apptainer exec` of a SIF image holding Java and agent.jar.
struct ApptainerLaunch {
  std::optional<std::string> image;               // required: a .sif path
  std::optional<std::vector<std::string>> binds;  // each one `--bind SRC[:DST[:OPTS]]`
  std::optional<std::string> java_path;  // default /opt/java/openjdk/bin/java (inbound-agent)
  std::optional<std::string> jar_path;   // default /usr/share/jenkins/agent.jar

  bool operator==(const ApptainerLaunch&) const = default;
};

struct JobTemplate {
  std::string name;
  std::vector<std::string> inherit_from;  // parents, applied in order: a later one wins
  std::optional<std::string> label;       // space-separated Jenkins labels
  std::optional<int> instance_cap;
  std::optional<int> idle_minutes;
  std::optional<NodeUsageMode> node_usage_mode;
  std::optional<int> agent_timeout_minutes;
  std::optional<int> no_reconnect_after_minutes;  // the agent's -noReconnectAfter
  JobFields job;
  // job.partition when no layer sets one: the cloud's defaultPartition, or a template's (which
  // wins over the cloud's, as any later layer does)
  std::optional<std::string> default_partition;
  NativeLaunch agent;
  std::optional<PyxisLaunch> pyxis;
  std::optional<ApptainerLaunch> apptainer;
  std::optional<std::string> custom_script;        // submitted unchanged instead of a generated one
  std::map<std::string, std::string> environment;  // extra variables, merged key by key

  bool operator==(const JobTemplate&) const = default;
};

// `top` over `base`: every field set in `top` wins, `extra` and `environment` merge key by key,
// the pyxis and apptainer blocks merge field by field. `name` and `inherit_from` are taken from
// `top` (the layer being resolved), since they describe it, not what it inherits.
JobTemplate Overlay(const JobTemplate& base, const JobTemplate& top);

}  // namespace slurmfleet::spec
