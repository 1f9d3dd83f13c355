#include "slurm/job_outcome.h"

namespace slurmfleet::slurm {
namespace {

std::string SlurmSays(const JobInfo& job) {
  std::string says = job.state_description.empty() ? job.state_reason : job.state_description;
  if (says.empty() || says == "None") return {};
  return " (Slurm: " + says + ")";
}

std::string ExitPart(const ExitCode& e) {
  if (e.signal && *e.signal != 0) {
    return "killed by signal " + std::to_string(*e.signal) +
           (e.signal_name.empty() ? "" : " (" + e.signal_name + ")");
  }
  if (e.return_code) return "exit code " + std::to_string(*e.return_code);
  return {};
}

// A failed script's output is the first place an operator looks, and slurmrestd cannot show it.
std::string OutputPart(const JobInfo& job) {
  std::string where = OutputLocation(job);
  return where.empty() ? where : "; " + where;
}

}  // namespace

std::string OutputLocation(const JobInfo& job) {
  auto useful = [](const std::string& path) { return !path.empty() && path != "/dev/null"; };
  if (!useful(job.standard_output) && !useful(job.standard_error)) return {};
  std::string text = "the script's ";
  if (useful(job.standard_output)) text += "output is in " + job.standard_output;
  if (useful(job.standard_error)) {
    text +=
        (useful(job.standard_output) ? ", its errors in " : "errors are in ") + job.standard_error;
  }
  if (!job.batch_host.empty()) text += " on node " + job.batch_host;
  return text;
}

std::string DescribeOutcome(const JobInfo& job) {
  const std::string state = JobStateString(job.state);
  switch (job.state.base) {
    case BaseState::kPending:
      return state + " (reason: " + job.state_reason + ")";
    case BaseState::kRunning:
    case BaseState::kSuspended:
      return state + (job.nodes.empty() ? "" : " on " + job.nodes);
    case BaseState::kCompleted:
      return state + ", " +
             (ExitPart(job.exit_code).empty() ? "exit code 0" : ExitPart(job.exit_code));
    case BaseState::kTimeout:
      return state +
             (job.time_limit_minutes
                  ? " after its time limit of " + std::to_string(*job.time_limit_minutes) + " min"
                  : " after its time limit") +
             OutputPart(job);
    case BaseState::kOutOfMemory:
      return state + ": the job used more memory than it asked for; raise memory_per_node" +
             OutputPart(job);
    case BaseState::kNodeFail:
      return state + ": a node of the job failed" +
             (job.nodes.empty() ? "" : " (" + job.nodes + ")") + SlurmSays(job);
    case BaseState::kBootFail:
      return state + ": the node could not be booted" + SlurmSays(job);
    case BaseState::kFailed:
      if (job.exit_code.signal == kSetupFailureSignal) {
        return state +
               " before the script ran: slurmstepd could not set the job up, most often because "
               "the "
               "working directory '" +
               job.current_working_directory +
               "' does not exist on the node and cannot be created there; create it or choose "
               "another" +
               SlurmSays(job);
      }
      return state + (ExitPart(job.exit_code).empty() ? "" : ", " + ExitPart(job.exit_code)) +
             SlurmSays(job) + OutputPart(job);
    default:
      return state + (ExitPart(job.exit_code).empty() ? "" : ", " + ExitPart(job.exit_code)) +
             SlurmSays(job);
  }
}

}  // namespace slurmfleet::slurm
