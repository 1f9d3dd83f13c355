// Rendering: a resolved template plus the facts of one launch become exactly one batch script and
// one job request. Pure: same inputs, same bytes; no clock, no environment, no file reads.
//
// Launch modes (spec::LaunchMode):
//   native    the agent runs on the node: `srun -N1 -n1 ... java -jar agent.jar ...`, once the
//             script has checked that Java's version (launch/java_check.h)
//   pyxis     the agent runs in an Enroot container: `srun -N1 -n1 --container-image=... ...`
//   apptainer the agent runs in a SIF image: `srun -N1 -n1 ... apptainer exec ...`
//   custom    the template's own script, submitted unchanged
// Every generated script starts exactly one agent, on the node that runs the batch script, in a
// step that overlaps the rest of the allocation, so builds can use every node of a multi-node job.
// The agent secret travels only in the job environment and a 0600 file (`-secret @file`); it is
// never on a command line, where `ps` would show it to anyone on the node.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "base/secret.h"
#include "jenkins/agent_java.h"
#include "slurm/job.h"
#include "spec/resolve.h"

namespace slurmfleet::launch {

// The facts of one launch, beyond the template.
struct LaunchContext {
  std::string cloud;         // validated as a name (agent_name.h)
  std::string agent_name;    // from MakeAgentName; also the Slurm job name
  std::string jenkins_url;   // http(s)://...; a missing trailing slash is added
  std::string api_version;   // "v0.0.45": the job_desc schema extra fields are checked against
  Secret agent_secret;       // from the node's JNLP file; ends up only in JENKINS_SECRET
  uint64_t agent_index = 0;  // SLURMFLEET_AGENT_INDEX, e.g. to pick distinct ports on one node
  // The oldest Java a native agent may start with (jenkins::MinimumAgentJava of the controller);
  // the script ends the job with a message when the node's is older or missing.
  int minimum_java = jenkins::kAgentJavaFloor;
};

struct RenderedJob {
  // The request to submit. script = the batch script; name = the agent name; comment = the
  // ownership tag; requeue = false; environment = JENKINS_URL, JENKINS_SECRET (secret = true),
  // JENKINS_AGENT_NAME, SLURMFLEET_AGENT_INDEX, then the template's variables by name.
  slurm::JobRequest request;
  spec::LaunchMode mode = spec::LaunchMode::kNative;
  std::string api_version;
  // The Jenkins node's remoteFS: {workdir}/agents/{agent} for native and apptainer, {workdir}
  // for pyxis and custom scripts.
  std::string remote_fs;
};

// kInvalidInput when a name is invalid, the Jenkins URL is not http(s), the API version has no
// schema, or a raw job field does not fit that version's schema (where = "job.<field>").
Result<RenderedJob> Render(const spec::ResolvedTemplate& tmpl, const LaunchContext& context);

// The exact body of POST job/submit for the rendered API version. `redact_secrets` prints the
// agent secret as "***"; the body actually sent uses false. kInvalidInput for an API version
// slurm::FindDialect does not know.
Result<nlohmann::json> SubmitBody(const RenderedJob& job, bool redact_secrets);

}  // namespace slurmfleet::launch
