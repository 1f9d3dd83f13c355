// The documented mapping from Slurm's job state (base state + flags + pending reason) to our
// Phase. Pure function; docs/job-states.md is the table in prose.
//
//   COMPLETING or STAGE_OUT flag (any base state) -> kCompleting: ended, resources still held
//   PENDING, no flag                 -> kPending; with a reason that can never resolve -> kFailed
//   PENDING + CONFIGURING / POWER_UP_NODE, RUNNING + CONFIGURING -> kStarting (nodes booting)
//   RUNNING                          -> kRunning
//   SUSPENDED                        -> kSuspended
//   COMPLETED                        -> kSucceeded
//   CANCELLED                        -> kCancelled
//   FAILED, TIMEOUT, NODE_FAIL, BOOT_FAIL, DEADLINE, OUT_OF_MEMORY, PREEMPTED -> kFailed
//   REQUEUE_HOLD, REQUEUED, SPECIAL_EXIT flags -> kFailed (we submit requeue=false: a requeued
//                                       job is not ours to wait for)
//   an unknown state                 -> unchanged (kept as it was; the raw state is recorded)
#pragma once

#include <set>
#include <string>

#include "slurm/job.h"
#include "store/submission.h"

namespace slurmfleet::fleet {

struct FailFastPolicy {
  // Pending reasons that no amount of waiting resolves.
  std::set<std::string> reasons = {
      "PartitionConfig",          "BadConstraints",  "InvalidAccount",     "InvalidQOS",
      "AccountNotAllowed",        "QOSNotAllowed",   "PartitionNodeLimit", "PartitionTimeLimit",
      "DependencyNeverSatisfied", "InvalidLicenses",
  };
  // A down partition may come back: fail fast on it only when the site says so.
  bool partition_down_is_fatal = false;
};

struct PhaseDecision {
  store::Phase phase;
  std::string failure;  // why, when kFailed (or kCancelled/kLost), for a human
};

// `current` is returned unchanged for states this build does not know.
PhaseDecision DecidePhase(const slurm::JobInfo& job, store::Phase current,
                          const FailFastPolicy& policy);

// The same for the lighter jobs/state answer, which has no reason: never fails fast.
store::Phase PhaseOfState(const slurm::JobState& state, store::Phase current);

}  // namespace slurmfleet::fleet
