#include "spec/job_template.h"

namespace slurmfleet::spec {
namespace {

template <typename T>
void Take(std::optional<T>& into, const std::optional<T>& top) {
  if (top) into = top;
}

// The job_desc fields that ask for a job's memory: Slurm keeps one request (sbatch's --mem,
// --mem-per-cpu and --mem-per-gpu exclude each other), and of two it would take one silently.
constexpr const char* kOtherMemoryFields[] = {"memory_per_cpu", "memory_per_tres"};

bool SetsMemory(const JobFields& f) {
  if (f.memory_per_node_mb) return true;
  for (const char* key : kOtherMemoryFields) {
    if (f.extra.contains(key)) return true;
  }
  return false;
}

JobFields OverlayJob(const JobFields& base, const JobFields& top) {
  JobFields out = base;
  // a layer's memory request replaces an earlier layer's, whichever form either takes
  if (SetsMemory(top)) {
    out.memory_per_node_mb.reset();
    for (const char* key : kOtherMemoryFields) out.extra.erase(key);
  }
  Take(out.partition, top.partition);
  Take(out.account, top.account);
  Take(out.qos, top.qos);
  Take(out.cpus_per_task, top.cpus_per_task);
  Take(out.tasks, top.tasks);
  Take(out.memory_per_node_mb, top.memory_per_node_mb);
  Take(out.time_limit_minutes, top.time_limit_minutes);
  Take(out.tres_per_job, top.tres_per_job);
  Take(out.minimum_nodes, top.minimum_nodes);
  Take(out.maximum_nodes, top.maximum_nodes);
  Take(out.required_nodes, top.required_nodes);
  Take(out.constraints, top.constraints);
  Take(out.current_working_directory, top.current_working_directory);
  Take(out.standard_output, top.standard_output);
  Take(out.standard_error, top.standard_error);
  for (const auto& [key, value] : top.extra.items()) out.extra[key] = value;
  return out;
}

NativeLaunch OverlayNative(const NativeLaunch& base, const NativeLaunch& top) {
  NativeLaunch out = base;
  Take(out.java_path, top.java_path);
  Take(out.jar_path, top.jar_path);
  Take(out.download_jar, top.download_jar);
  // A jar path and downloadJar answer one question, where agent.jar comes from: a later layer's
  // answer wins whichever it gives, so a pipeline's jar_path beats the cloud's downloadJar.
  if (top.jar_path && !top.download_jar) out.download_jar.reset();
  Take(out.setup_script, top.setup_script);
  return out;
}

std::optional<PyxisLaunch> OverlayPyxis(const std::optional<PyxisLaunch>& base,
                                        const std::optional<PyxisLaunch>& top) {
  if (!top) return base;
  if (!base) return top;
  PyxisLaunch out = *base;
  Take(out.container_image, top->container_image);
  Take(out.container_mount_home, top->container_mount_home);
  Take(out.container_mounts, top->container_mounts);
  Take(out.container_workdir, top->container_workdir);
  Take(out.container_writable, top->container_writable);
  Take(out.container_remap, top->container_remap);
  Take(out.container_name, top->container_name);
  return out;
}

std::optional<ApptainerLaunch> OverlayApptainer(const std::optional<ApptainerLaunch>& base,
                                                const std::optional<ApptainerLaunch>& top) {
  if (!top) return base;
  if (!base) return top;
  ApptainerLaunch out = *base;
  Take(out.image, top->image);
  Take(out.binds, top->binds);
  Take(out.java_path, top->java_path);
  Take(out.jar_path, top->jar_path);
  return out;
}

}  // namespace

JobTemplate Overlay(const JobTemplate& base, const JobTemplate& top) {
  JobTemplate out = base;
  out.name = top.name;
  out.inherit_from = top.inherit_from;
  Take(out.label, top.label);
  Take(out.instance_cap, top.instance_cap);
  Take(out.idle_minutes, top.idle_minutes);
  Take(out.node_usage_mode, top.node_usage_mode);
  Take(out.agent_timeout_minutes, top.agent_timeout_minutes);
  Take(out.no_reconnect_after_minutes, top.no_reconnect_after_minutes);
  Take(out.default_partition, top.default_partition);
  out.job = OverlayJob(base.job, top.job);
  out.agent = OverlayNative(base.agent, top.agent);
  out.pyxis = OverlayPyxis(base.pyxis, top.pyxis);
  out.apptainer = OverlayApptainer(base.apptainer, top.apptainer);
  Take(out.custom_script, top.custom_script);
  for (const auto& [key, value] : top.environment) out.environment[key] = value;
  return out;
}

}  // namespace slurmfleet::spec
