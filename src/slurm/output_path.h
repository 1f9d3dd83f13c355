// Completes the output file names slurmrestd reports before API v0.0.43, which has no
// stdout_expanded. Slurm 24.11 fills in %j, %u, %x, %A, %a and %% there, but leaves the
// specifiers it resolves only on the node: %N (the node's short host name), %n and %t (the node
// and task number, 0 for a batch script), %s (the step, "batch") and %J (job.step, which a batch
// script's file shows as the job id alone). Measured on the testbeds: 24.11 answered
// "/tmp/p-1-ci-%N-%s-%t.out" for the file slurmstepd wrote as "/tmp/p-1-ci-vm-batch-0.out";
// 26.05 answers v0.0.42 with the whole name expanded. Pure function.
#pragma once

#include <string>
#include <string_view>

#include "slurm/job.h"

namespace slurmfleet::slurm {

// `path` with the node-side specifiers of a batch script's output file filled in from `job`: %N
// becomes its batch_host (Slurm uses the node's short host name, which is its node name unless
// slurmd was started with -N), %n and %t become 0, %s "batch", %J the job id. A width (%5J) pads
// numbers with zeros, up to 10 digits, and is ignored for %N and %s, as Slurm does. Any other
// '%' is left as it is: the rest was filled in by slurmctld, and a '%' that remains came from
// "%%". A path with a backslash is returned unchanged (Slurm expands nothing in it), and so is
// %N while the job has no batch host yet.
std::string CompleteOutputPath(std::string_view path, const JobInfo& job);

}  // namespace slurmfleet::slurm
