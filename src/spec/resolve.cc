#include "spec/resolve.h"

#include <sstream>

namespace slurmfleet::spec {
namespace {

const JobTemplate* Find(std::span<const JobTemplate> templates, std::string_view name) {
  for (const JobTemplate& t : templates) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Result<JobTemplate> ResolveChain(std::span<const JobTemplate> templates, std::string_view name,
                                 std::vector<std::string>& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] != name) continue;
    std::string cycle;
    for (size_t j = i; j < chain.size(); ++j) cycle += chain[j] + " -> ";
    cycle += std::string(name);
    return Fail(Code::kInvalidInput,
                "inheritFrom forms a cycle (" + cycle + "); remove one of these links",
                "templates." + chain.back() + ".inheritFrom");
  }
  const JobTemplate* t = Find(templates, name);
  if (t == nullptr) {
    if (chain.empty()) {
      return Fail(Code::kNotFound, "no job template named '" + std::string(name) + "'",
                  "templates");
    }
    return Fail(
        Code::kInvalidInput,
        "inheritFrom names '" + std::string(name) + "', which is not a job template of this cloud",
        "templates." + chain.back() + ".inheritFrom");
  }
  chain.emplace_back(name);
  JobTemplate merged;
  for (const std::string& parent : t->inherit_from) {
    Result<JobTemplate> p = ResolveChain(templates, parent, chain);
    if (!p) return p;
    merged = Overlay(merged, *p);
  }
  chain.pop_back();
  return Overlay(merged, *t);
}

std::vector<std::string> SplitLabels(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

std::string_view LaunchModeName(LaunchMode mode) {
  switch (mode) {
    case LaunchMode::kNative:
      return "native";
    case LaunchMode::kPyxis:
      return "pyxis";
    case LaunchMode::kApptainer:
      return "apptainer";
    case LaunchMode::kCustomScript:
      return "custom";
  }
  return "unknown";
}

Result<JobTemplate> ResolveInheritance(std::span<const JobTemplate> templates,
                                       std::string_view name) {
  std::vector<std::string> chain;
  return ResolveChain(templates, name, chain);
}

Result<ResolvedTemplate> Finalize(const JobTemplate& m) {
  const std::string where = "templates." + m.name + ".";
  ResolvedTemplate r;
  r.name = m.name;
  r.labels = SplitLabels(m.label.value_or(""));
  r.instance_cap = m.instance_cap;
  r.idle_minutes = m.idle_minutes.value_or(0);
  r.node_usage_mode = m.node_usage_mode.value_or(NodeUsageMode::kExclusive);
  r.agent_timeout_minutes = m.agent_timeout_minutes.value_or(kDefaultAgentTimeoutMinutes);
  r.no_reconnect_after_minutes =
      m.no_reconnect_after_minutes.value_or(kDefaultNoReconnectAfterMinutes);
  r.job = m.job;
  if (!r.job.partition) r.job.partition = m.default_partition;
  if (!r.job.current_working_directory) {
    r.job.current_working_directory = std::string(kDefaultWorkingDirectory);
  }
  if (!r.job.current_working_directory->starts_with("/")) {
    return Fail(Code::kInvalidInput,
                "'" + *r.job.current_working_directory +
                    "' is not an absolute path; use a directory that exists on every compute "
                    "node, e.g. /tmp/jenkins",
                where + "workingDirectory");
  }
  r.environment = m.environment;
  // The job sees only the variables of the request: without PATH, neither srun nor java is found.
  if (!r.environment.contains("PATH")) r.environment["PATH"] = std::string(kDefaultPath);

  if (m.custom_script && (m.pyxis || m.apptainer)) {
    return Fail(Code::kInvalidInput,
                "a custom script replaces the generated launch, so it cannot be combined with a " +
                    std::string(m.pyxis ? "pyxis" : "apptainer") + " block; remove one of them",
                where + "customScript");
  }
  if (m.pyxis && m.apptainer) {
    return Fail(Code::kInvalidInput,
                "both a pyxis and an apptainer block are set; an agent runs in one container "
                "runtime, so remove one",
                where + "apptainer");
  }
  if (m.custom_script) {
    r.mode = LaunchMode::kCustomScript;
    r.custom_script = *m.custom_script;
    if (!r.custom_script.starts_with("#!")) {
      return Fail(Code::kInvalidInput,
                  "a batch script must start with an interpreter line; begin it with #!/bin/bash",
                  where + "customScript");
    }
    return r;
  }
  if (m.pyxis) {
    r.mode = LaunchMode::kPyxis;
    r.pyxis = *m.pyxis;
    if (!r.pyxis.container_image || r.pyxis.container_image->empty()) {
      return Fail(Code::kInvalidInput,
                  "the pyxis block has no containerImage; set it to the agent image, e.g. "
                  "/images/jenkins-inbound-agent.sqsh",
                  where + "pyxis.containerImage");
    }
    if (r.pyxis.container_workdir && !r.pyxis.container_workdir->starts_with("/")) {
      return Fail(Code::kInvalidInput,
                  "'" + *r.pyxis.container_workdir + "' is not an absolute path",
                  where + "pyxis.containerWorkdir");
    }
    return r;
  }
  if (m.apptainer) {
    r.mode = LaunchMode::kApptainer;
    r.apptainer = *m.apptainer;
    if (!r.apptainer.image || r.apptainer.image->empty()) {
      return Fail(Code::kInvalidInput,
                  "the apptainer block has no image; set it to a SIF file, e.g. "
                  "/images/jenkins-inbound-agent.sif",
                  where + "apptainer.image");
    }
    if (!r.apptainer.java_path) r.apptainer.java_path = std::string(kInboundAgentJava);
    if (!r.apptainer.jar_path) r.apptainer.jar_path = std::string(kInboundAgentJar);
    return r;
  }
  r.mode = LaunchMode::kNative;
  r.java_path = m.agent.java_path.value_or(std::string(kDefaultJavaPath));
  r.download_jar = m.agent.download_jar.value_or(false);
  r.setup_script = m.agent.setup_script.value_or("");
  if (!r.download_jar) {
    if (!m.agent.jar_path || m.agent.jar_path->empty()) {
      return Fail(Code::kInvalidInput,
                  "native launch needs agent.jar: set agentLaunch.jarPath to its path on the "
                  "compute nodes, or set agentLaunch.downloadJar: true (in a pipeline's JSON: "
                  "agent.jar_path or agent.download_jar)",
                  where + "agentLaunch.jarPath");
    }
    r.jar_path = *m.agent.jar_path;
  }
  return r;
}

Result<ResolvedTemplate> Resolve(const JobTemplate& cloud_defaults,
                                 std::span<const JobTemplate> templates, std::string_view name,
                                 const JobTemplate* pipeline) {
  Result<JobTemplate> t = ResolveInheritance(templates, name);
  if (!t) return std::unexpected(t.error());
  JobTemplate merged = Overlay(cloud_defaults, *t);
  if (pipeline != nullptr) {
    JobTemplate top = *pipeline;
    top.name = merged.name;
    top.inherit_from = merged.inherit_from;
    merged = Overlay(merged, top);
  }
  return Finalize(merged);
}

}  // namespace slurmfleet::spec
