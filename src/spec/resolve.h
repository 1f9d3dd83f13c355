// Resolution of a job template: inheritFrom, then layering cloud defaults -> template ->
// pipeline JSON, then defaults and the launch mode. The result, a ResolvedTemplate, is what
// launch::Render() takes. Pure functions over values; no I/O.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "spec/job_template.h"

namespace slurmfleet::spec {

inline constexpr std::string_view kDefaultWorkingDirectory = "/tmp/jenkins";
inline constexpr std::string_view kDefaultJavaPath = "java";
// The jenkins/inbound-agent image layout, used inside Pyxis and (by default) Apptainer images.
inline constexpr std::string_view kInboundAgentJava = "/opt/java/openjdk/bin/java";
inline constexpr std::string_view kInboundAgentJar = "/usr/share/jenkins/agent.jar";
inline constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
inline constexpr int kDefaultAgentTimeoutMinutes = 5;
inline constexpr int kDefaultNoReconnectAfterMinutes = 10;

enum class LaunchMode { kNative, kPyxis, kApptainer, kCustomScript };
std::string_view LaunchModeName(LaunchMode mode);  // "native", "pyxis", "apptainer", "custom"

// A template with every layer applied and every default filled in.
struct ResolvedTemplate {
  std::string name;
  std::vector<std::string> labels;  // the label string split on whitespace
  std::optional<int> instance_cap;  // unset: no cap beyond the cloud's maxAgents
  int idle_minutes = 0;             // 0: the agent ends after its build
  NodeUsageMode node_usage_mode = NodeUsageMode::kExclusive;
  int agent_timeout_minutes = kDefaultAgentTimeoutMinutes;
  int no_reconnect_after_minutes = kDefaultNoReconnectAfterMinutes;
  JobFields job;  // current_working_directory is always set (an absolute path)
  LaunchMode mode = LaunchMode::kNative;
  // Native: java_path is always set; jar_path is set unless download_jar.
  std::string java_path;
  std::string jar_path;
  bool download_jar = false;
  std::string setup_script;
  PyxisLaunch pyxis;          // mode kPyxis: container_image is set
  ApptainerLaunch apptainer;  // mode kApptainer: image, java_path and jar_path are set
  std::string custom_script;  // mode kCustomScript
  std::map<std::string, std::string> environment;  // PATH defaults to kDefaultPath

  bool operator==(const ResolvedTemplate&) const = default;
};

// The template `name` merged over its ancestors: each parent named in inheritFrom is resolved
// the same way and applied in the listed order (a later parent wins over an earlier one), then
// the template itself wins over all of them. kNotFound for an unknown name; kInvalidInput for a
// cycle (the message shows it: "a -> b -> a") or an unknown parent.
Result<JobTemplate> ResolveInheritance(std::span<const JobTemplate> templates,
                                       std::string_view name);

// Picks the launch mode and fills in defaults. A Pyxis block takes precedence over native launch
// settings. kInvalidInput (where = "templates.<name>.<field>") when the merged layers conflict
// (customScript together with a container block, Pyxis together with Apptainer) or something the
// mode needs is missing (no jarPath and no downloadJar, no image, a relative working directory,
// a custom script without "#!").
Result<ResolvedTemplate> Finalize(const JobTemplate& merged);

// The whole chain: `cloud_defaults` -> template `name` (with its ancestors) -> `pipeline` (if any),
// then Finalize().
Result<ResolvedTemplate> Resolve(const JobTemplate& cloud_defaults,
                                 std::span<const JobTemplate> templates, std::string_view name,
                                 const JobTemplate* pipeline = nullptr);

}  // namespace slurmfleet::spec
