#include "launch/render.h"

#include <string_view>
#include <vector>

#include "base/url.h"
#include "launch/agent_name.h"
#include "launch/java_check.h"
#include "launch/shell_quote.h"
#include "slurm/dialect.h"
#include "spec/job_desc_schema.h"

namespace slurmfleet::launch {
namespace {

using spec::LaunchMode;
using spec::ResolvedTemplate;

std::string Q(std::string_view s) { return ShellQuote(s); }

// Whether a template value that reaches the script holds '$' or '`': single-quoted, it stays
// literal, which is what we want but what shellcheck flags (SC2016) as a likely mistake.
bool QuotesExpansionCharacters(const ResolvedTemplate& t) {
  std::vector<std::string> values = {*t.job.current_working_directory, t.java_path, t.jar_path};
  for (const std::optional<std::string>* v :
       {&t.pyxis.container_image, &t.pyxis.container_mounts, &t.pyxis.container_workdir,
        &t.pyxis.container_name, &t.apptainer.image, &t.apptainer.java_path,
        &t.apptainer.jar_path}) {
    if (*v) values.push_back(**v);
  }
  for (const std::string& b : t.apptainer.binds.value_or(std::vector<std::string>{})) {
    values.push_back(b);
  }
  for (const std::string& v : values) {
    if (v.find_first_of("$`") != std::string::npos) return true;
  }
  return false;
}

// The first lines of every generated script.
std::string Header(const ResolvedTemplate& t, const LaunchContext& c) {
  std::string s = "#!/bin/bash\n";
  s += "# slurmfleet agent " + c.agent_name + ": cloud " + c.cloud + ", template " + t.name + ", " +
       std::string(spec::LaunchModeName(t.mode)) + " launch.\n";
  if (QuotesExpansionCharacters(t)) {
    s += "# shellcheck disable=SC2016 # template values are single-quoted to stay literal\n";
  }
  s += "set -eo pipefail\n\n";
  s +=
      "# Slurm starts the job with only the variables of the request; builds still want USER and\n";
  s += "# HOME (git refuses to run without HOME).\n";
  s += "USER=\"${USER:-$(id -un)}\"\n";
  s += "HOME=\"${HOME:-$(getent passwd \"$USER\" | cut -d: -f6)}\"\n";
  s += "export USER HOME\n\n";
  return s;
}

constexpr std::string_view kTraps =
    "trap slurmfleet_cleanup EXIT\n"
    "trap 'exit 143' TERM\n"
    "trap 'exit 130' INT\n"
    "trap 'exit 129' HUP\n";

// The private directory of native and Apptainer agents, its cleanup, and the secret file in it.
std::string PrivateDirectory(const ResolvedTemplate& t, const LaunchContext& c) {
  const std::string& workdir = *t.job.current_working_directory;
  std::string s;
  s += "slurmfleet_workdir=" + Q(workdir) + "\n";
  s += "slurmfleet_agent_dir=" + Q(workdir + "/agents/" + c.agent_name) + "\n";
  s += "slurmfleet_secret_file=\"$slurmfleet_agent_dir/secret\"\n";
  s += "# The cleanup removes $slurmfleet_agent_dir: a setup script cannot point it elsewhere.\n";
  s += "readonly slurmfleet_workdir slurmfleet_agent_dir slurmfleet_secret_file\n";
  if (t.download_jar) s += "jar_tmp=\n";
  s += "\n";
  s += "# The agent's private directory: remoteFS and remoting -workDir, so two agents on one "
       "node\n";
  s += "# never share a workspace. It is removed when the job ends, however it ends.\n";
  s += "job_umask=\"$(umask)\"\n";
  s += "umask 077\n";
  s += "mkdir -p -- \"$slurmfleet_workdir/agents\"\n";
  s +=
      "if [ -L \"$slurmfleet_workdir/agents\" ] || [ ! -O \"$slurmfleet_workdir/agents\" ]; then\n";
  s += "  echo \"slurmfleet: $slurmfleet_workdir/agents must be a directory owned by $USER\" >&2\n";
  s += "  exit 1\n";
  s += "fi\n";
  s += "mkdir -m 0700 -- \"$slurmfleet_agent_dir\"\n";
  s += "slurmfleet_cleanup() {\n";
  s += "  rm -rf -- \"$slurmfleet_agent_dir\"\n";
  if (t.download_jar) s += "  if [ -n \"$jar_tmp\" ]; then rm -f -- \"$jar_tmp\"; fi\n";
  s += "}\n";
  s += kTraps;
  s += "\n";
  s += "# The secret goes from the environment into a 0600 file, never onto a command line where\n";
  s += "# anyone on the node could read it; builds do not inherit it.\n";
  s += "printf '%s\\n' \"$JENKINS_SECRET\" > \"$slurmfleet_secret_file\"\n";
  s += "unset JENKINS_SECRET\n";
  s += "# Builds create files as the job would without us (shared caches, published artifacts).\n";
  s += "umask \"$job_umask\"\n\n";
  return s;
}

std::string DownloadJar() {
  std::string s;
  s += "# agent.jar comes from the controller the agent talks to, cached in the working "
       "directory:\n";
  s += "# fetched when missing or older than the controller's, into a temporary file that is\n";
  s += "# checked and then renamed into place, so a concurrent agent never sees half a jar.\n";
  s += "agent_jar=\"$slurmfleet_workdir/agent.jar\"\n";
  s += "jar_tmp=\"$(mktemp -- \"$agent_jar.XXXXXX\")\"\n";
  s += "time_cond=()\n";
  s += "if [ -s \"$agent_jar\" ]; then\n";
  s += "  time_cond=(--time-cond \"$agent_jar\")\n";
  s += "fi\n";
  s += "if ! curl --fail --silent --show-error --location --retry 3 \"${time_cond[@]}\" \\\n";
  s += "    --output \"$jar_tmp\" \"${JENKINS_URL}jnlpJars/agent.jar\"; then\n";
  s += "  echo \"slurmfleet: cannot download ${JENKINS_URL}jnlpJars/agent.jar\" >&2\n";
  s += "  exit 1\n";
  s += "fi\n";
  s += "if [ -s \"$jar_tmp\" ]; then\n";
  s += "  if [ \"$(head -c 2 -- \"$jar_tmp\")\" != PK ]; then\n";
  s += "    echo \"slurmfleet: ${JENKINS_URL}jnlpJars/agent.jar is not a jar file\" >&2\n";
  s += "    exit 1\n";
  s += "  fi\n";
  s += "  chmod 0644 -- \"$jar_tmp\"\n";
  s += "  mv -f -- \"$jar_tmp\" \"$agent_jar\"\n";
  s += "fi\n\n";
  return s;
}

// Setup scripts load Java with `module load`, as on a login node. A job submitted through
// slurmrestd inherits no login shell, so `module` (a shell function) is defined here from the
// profile script Lmod or Environment Modules installs (Debian's names, then RHEL's).
std::string ModulesInit() {
  std::string s;
  s += "# `module` as a login shell has it: a job submitted through slurmrestd inherits none.\n";
  s += "if ! command -v module > /dev/null 2>&1; then\n";
  s += "  for modules_init in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh "
       "/etc/profile.d/z00_lmod.sh; do\n";
  s += "    if [ -r \"$modules_init\" ]; then\n";
  s += "      set +e\n";
  s += "      # shellcheck source=/dev/null\n";
  s += "      . \"$modules_init\"\n";
  s += "      set -e\n";
  s += "      break\n";
  s += "    fi\n";
  s += "  done\n";
  s += "fi\n\n";
  return s;
}

// The srun that starts the one agent: on the node running this script, overlapping the
// allocation so that build steps can still use every CPU of every node.
constexpr std::string_view kAgentStep =
    "# One agent, on this node, in a step that overlaps the allocation: builds may use all of it.\n"
    "srun -N1 -n1 --overlap --nodelist=\"$SLURMD_NODENAME\" \\\n";

std::string NoReconnect(const ResolvedTemplate& t) {
  // An agent whose node was deleted must exit instead of reconnecting forever.
  return "-noReconnectAfter " + std::to_string(t.no_reconnect_after_minutes) + "m";
}

std::string NativeScript(const ResolvedTemplate& t, const LaunchContext& c) {
  // The secret leaves the environment before the setup script runs: an `env` or `set -x` there
  // would otherwise print it into the job's output file.
  std::string s = Header(t, c);
  s += PrivateDirectory(t, c);
  if (!t.setup_script.empty()) {
    s += ModulesInit();
    s += "# Setup script of the template.\n";
    s += t.setup_script;
    if (!t.setup_script.ends_with("\n")) s += "\n";
    s += "# Our cleanup again, should the setup script have set traps of its own.\n";
    s += kTraps;
    s += "\n";
  }
  s += JavaVersionCheck({Q(t.java_path)}, c.minimum_java);
  std::string jar = "\"$agent_jar\"";
  if (t.download_jar) {
    s += DownloadJar();
  } else {
    jar = Q(t.jar_path);
  }
  s += kAgentStep;
  s += "  \"$java_cmd\" -jar " + jar + " \\\n";
  s += "  -url \"$JENKINS_URL\" -name \"$JENKINS_AGENT_NAME\" -secret \"@$slurmfleet_secret_file\" "
       "\\\n";
  s += "  -webSocket -workDir \"$slurmfleet_agent_dir\" " + NoReconnect(t) + "\n";
  return s;
}

std::string ApptainerScript(const ResolvedTemplate& t, const LaunchContext& c) {
  std::string s = Header(t, c);
  s += PrivateDirectory(t, c);
  std::string exec = "apptainer exec";
  for (const std::string& bind : t.apptainer.binds.value_or(std::vector<std::string>{})) {
    exec += " --bind " + Q(bind);
  }
  exec += " --bind \"$slurmfleet_agent_dir\" " + Q(*t.apptainer.image);
  s += JavaVersionCheck(
      {Q(*t.apptainer.java_path), JavaSite::kApptainer, Q(*t.apptainer.image), exec},
      c.minimum_java);
  s += kAgentStep;
  s += "  " + exec + " \\\n";
  s += "  " + Q(*t.apptainer.java_path) + " -jar " + Q(*t.apptainer.jar_path) + " \\\n";
  s += "  -url \"$JENKINS_URL\" -name \"$JENKINS_AGENT_NAME\" -secret \"@$slurmfleet_secret_file\" "
       "\\\n";
  s += "  -webSocket -workDir \"$slurmfleet_agent_dir\" " + NoReconnect(t) + "\n";
  return s;
}

std::string PyxisScript(const ResolvedTemplate& t, const LaunchContext& c) {
  const spec::PyxisLaunch& p = t.pyxis;
  std::string s = Header(t, c);
  s += "# Runs inside the container: checks the image's Java, moves the secret from the "
       "environment\n";
  s += "# into a 0600 file (never onto a command line), then starts the agent with the "
       "arguments\n";
  s += "# it is given. Remoting works in /tmp/{agent} inside the container; remoteFS is the\n";
  s += "# working directory.\n";
  s += "# shellcheck disable=SC2016 # $1, $@ and $JENKINS_SECRET expand inside the container\n";
  s += "in_container='job_umask=\"$(umask)\"\n";
  s += "umask 077\n";
  s += "dir=\"$1\"\n";
  s += "shift\n";
  s += JavaVersionCheck({"\"$1\"", JavaSite::kPyxis}, c.minimum_java);
  s += "mkdir -p -- \"$dir\"\n";
  s += "trap \"rm -rf -- \\\"$dir\\\"\" EXIT\n";
  s += "trap \"exit 143\" TERM\n";
  s += "trap \"exit 130\" INT\n";
  s += "printf \"%s\\n\" \"$JENKINS_SECRET\" > \"$dir/secret\"\n";
  s += "unset JENKINS_SECRET\n";
  s += "umask \"$job_umask\"\n";
  s += "\"$@\" -secret \"@$dir/secret\" -workDir \"$dir\"'\n\n";
  s += kAgentStep;
  s += "  --container-image=" + Q(*p.container_image) + " \\\n";
  if (p.container_mounts) s += "  --container-mounts=" + Q(*p.container_mounts) + " \\\n";
  if (p.container_mount_home) {
    s += *p.container_mount_home ? "  --container-mount-home \\\n"
                                 : "  --no-container-mount-home \\\n";
  }
  if (p.container_workdir) s += "  --container-workdir=" + Q(*p.container_workdir) + " \\\n";
  if (p.container_writable) {
    s += *p.container_writable ? "  --container-writable \\\n" : "  --container-readonly \\\n";
  }
  if (p.container_remap) {
    s += *p.container_remap ? "  --container-remap-root \\\n" : "  --no-container-remap-root \\\n";
  }
  if (p.container_name) s += "  --container-name=" + Q(*p.container_name) + " \\\n";
  s += "  /bin/sh -c \"$in_container\" slurmfleet-agent \"/tmp/$JENKINS_AGENT_NAME\" \\\n";
  s += "  " + Q(spec::kInboundAgentJava) + " -jar " + Q(spec::kInboundAgentJar) + " \\\n";
  s += "  -url \"$JENKINS_URL\" -name \"$JENKINS_AGENT_NAME\" -webSocket " + NoReconnect(t) + "\n";
  return s;
}

Status CheckExtraFields(const spec::JobFields& job, const std::string& version) {
  const spec::JobDescSchema* schema = spec::FindJobDescSchema(version);
  if (schema == nullptr) {
    return Fail(
        Code::kInvalidInput,
        "API version '" + version + "' is not supported; use one of " + slurm::SupportedVersions(),
        "apiVersion");
  }
  std::vector<Error> problems;
  for (const auto& [key, value] : job.extra.items()) {
    spec::CheckJobDescField(*schema, key, value, "job." + key, problems);
  }
  if (!problems.empty()) return std::unexpected(problems.front());
  return {};
}

}  // namespace

Result<RenderedJob> Render(const ResolvedTemplate& t, const LaunchContext& c) {
  if (Status s = ValidateName("cloud name", c.cloud); !s) return std::unexpected(s.error());
  if (Status s = ValidateName("template name", t.name); !s) return std::unexpected(s.error());
  if (Status s = ValidateAgentName(c.agent_name); !s) return std::unexpected(s.error());
  if (std::optional<UrlProblem> problem =
          CheckBaseUrl(c.jenkins_url, "https://jenkins.example.org/")) {
    return Fail(Code::kInvalidInput, problem->message + "; " + problem->fix, "jenkinsUrl");
  }
  if (!t.job.current_working_directory) {
    return Fail(Code::kInvalidInput, "no working directory; resolve the template first",
                "templates." + t.name + ".workingDirectory");
  }
  if (Status s = CheckExtraFields(t.job, c.api_version); !s) return std::unexpected(s.error());

  RenderedJob out;
  out.mode = t.mode;
  out.api_version = c.api_version;
  const std::string& workdir = *t.job.current_working_directory;
  switch (t.mode) {
    case LaunchMode::kNative:
      out.request.script = NativeScript(t, c);
      out.remote_fs = workdir + "/agents/" + c.agent_name;
      break;
    case LaunchMode::kApptainer:
      out.request.script = ApptainerScript(t, c);
      out.remote_fs = workdir + "/agents/" + c.agent_name;
      break;
    case LaunchMode::kPyxis:
      out.request.script = PyxisScript(t, c);
      out.remote_fs = workdir;
      break;
    case LaunchMode::kCustomScript:
      out.request.script = t.custom_script;
      out.remote_fs = workdir;
      break;
  }

  slurm::JobRequest& r = out.request;
  r.name = c.agent_name;
  r.comment = OwnershipTag(c.cloud, t.name);
  r.partition = t.job.partition.value_or("");
  r.account = t.job.account.value_or("");
  r.qos = t.job.qos.value_or("");
  r.cpus_per_task = t.job.cpus_per_task;
  r.tasks = t.job.tasks;
  r.memory_per_node_mb = t.job.memory_per_node_mb;
  r.time_limit_minutes = t.job.time_limit_minutes;
  r.tres_per_job = t.job.tres_per_job.value_or("");
  r.minimum_nodes = t.job.minimum_nodes;
  r.maximum_nodes = t.job.maximum_nodes;
  r.required_nodes = t.job.required_nodes.value_or(std::vector<std::string>{});
  r.constraints = t.job.constraints.value_or("");
  r.current_working_directory = workdir;
  r.standard_output = t.job.standard_output.value_or("");
  r.standard_error = t.job.standard_error.value_or("");
  r.extra_fields = t.job.extra;

  std::string url = c.jenkins_url;
  if (!url.ends_with("/")) url += "/";
  r.environment.push_back({"JENKINS_URL", url, false});
  r.environment.push_back({"JENKINS_SECRET", c.agent_secret.Reveal(), true});
  r.environment.push_back({"JENKINS_AGENT_NAME", c.agent_name, false});
  r.environment.push_back({"SLURMFLEET_AGENT_INDEX", std::to_string(c.agent_index), false});
  for (const auto& [name, value] : t.environment) r.environment.push_back({name, value, false});
  return out;
}

Result<nlohmann::json> SubmitBody(const RenderedJob& job, bool redact_secrets) {
  const slurm::Dialect* dialect = slurm::FindDialect(job.api_version);
  if (dialect == nullptr) {
    return Fail(Code::kInvalidInput,
                "API version '" + job.api_version + "' is not supported; use one of " +
                    slurm::SupportedVersions(),
                "apiVersion");
  }
  return slurm::EncodeSubmit(*dialect, std::span<const slurm::JobRequest>(&job.request, 1),
                             redact_secrets);
}

}  // namespace slurmfleet::launch
