#include "fleet/job_phase.h"

#include "slurm/job_outcome.h"

namespace slurmfleet::fleet {

using slurm::BaseState;
using store::Phase;

Phase PhaseOfState(const slurm::JobState& s, Phase current) {
  if (s.Has(slurm::kFlagCompleting) || s.Has(slurm::kFlagStageOut)) return Phase::kCompleting;
  if (s.Has(slurm::kFlagRequeueHold) || s.Has(slurm::kFlagRequeued) ||
      s.Has(slurm::kFlagSpecialExit)) {
    return Phase::kFailed;
  }
  switch (s.base) {
    case BaseState::kPending:
      return s.Has(slurm::kFlagConfiguring) || s.Has(slurm::kFlagPowerUpNode) ? Phase::kStarting
                                                                              : Phase::kPending;
    case BaseState::kRunning:
      return s.Has(slurm::kFlagConfiguring) ? Phase::kStarting : Phase::kRunning;
    case BaseState::kSuspended:
      return Phase::kSuspended;
    case BaseState::kCompleted:
      return Phase::kSucceeded;
    case BaseState::kCancelled:
      return Phase::kCancelled;
    case BaseState::kFailed:
    case BaseState::kTimeout:
    case BaseState::kNodeFail:
    case BaseState::kPreempted:
    case BaseState::kBootFail:
    case BaseState::kDeadline:
    case BaseState::kOutOfMemory:
      return Phase::kFailed;
    case BaseState::kUnknown:
      return current;
  }
  return current;
}

PhaseDecision DecidePhase(const slurm::JobInfo& job, Phase current, const FailFastPolicy& policy) {
  Phase phase = PhaseOfState(job.state, current);
  if (phase == Phase::kPending) {
    const std::string& reason = job.state_reason;
    bool fatal = policy.reasons.count(reason) > 0 ||
                 (policy.partition_down_is_fatal && reason == "PartitionDown");
    if (fatal) {
      return {Phase::kFailed,
              "pending for a reason that cannot resolve: " + reason +
                  (job.state_description.empty() ? "" : " (" + job.state_description + ")")};
    }
  }
  if (phase == Phase::kFailed) {
    if (job.state.Has(slurm::kFlagRequeueHold) || job.state.Has(slurm::kFlagRequeued)) {
      return {phase, "Slurm requeued the job (" + slurm::JobStateString(job.state) + ", reason " +
                         job.state_reason +
                         "); slurmfleet submits with requeue=false and retries on its own"};
    }
    return {phase, slurm::DescribeOutcome(job)};
  }
  if (phase == Phase::kCancelled) return {phase, slurm::DescribeOutcome(job)};
  return {phase, ""};
}

}  // namespace slurmfleet::fleet
