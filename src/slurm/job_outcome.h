// What happened to a job that ended, in one sentence for an operator: the state, the exit code or
// signal, and the likely cause where Slurm's own words are cryptic. Pure function.
#pragma once

#include <string>

#include "slurm/job.h"

namespace slurmfleet::slurm {

// Slurm raises this real-time signal (SIGRTMIN+19, "RaisedSignal:53") when slurmstepd cannot set
// a batch job up, most often because the working directory cannot be entered or created.
inline constexpr int kSetupFailureSignal = 53;

// e.g. "COMPLETED, exit code 0", "TIMEOUT after its time limit of 10 min",
// "FAILED before the script ran: ... working directory '/x' ... (Slurm: RaisedSignal:53(...))".
// A job whose script ran and failed, timed out or ran out of memory also says where the script's
// output went: "FAILED, exit code 3 (Slurm: NonZeroExitCode); the script's output is in
// /w/slurm-7.out on node n1".
// For a job that has not ended it names the state and the pending reason.
std::string DescribeOutcome(const JobInfo& job);

// Where the batch script's output went, from the job's (expanded) standard_output and
// standard_error and its batch_host: "the script's output is in /w/slurm-7.out on node n1", with
// ", its errors in /w/slurm-7.err" when they go elsewhere. Empty when Slurm names no file.
std::string OutputLocation(const JobInfo& job);

}  // namespace slurmfleet::slurm
