// How jobs look on the command line: one JSON object per job for --json, one line per job for
// humans. Presentation only; the model is slurm::JobInfo.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "slurm/job.h"

namespace slurmfleet::cli {

// Every field JobInfo holds, plus "outcome": slurm::DescribeOutcome's sentence. "stderr" is
// empty when errors go to the "stdout" file.
nlohmann::json JobToJson(const slurm::JobInfo& job);
// "ID  SLUID  STATE  REASON  USER  NAME  NODES" columns.
std::string JobHeaderLine();
std::string JobLine(const slurm::JobInfo& job);
// A job that can no longer change: not pending/running/suspended and not completing.
bool IsFinal(const slurm::JobState& state);

}  // namespace slurmfleet::cli
