// A version-independent, lossless text form of a JobRequest, for durable storage of submission
// intents: the job_desc JSON plus the names of secret variables. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"
#include "slurm/job.h"

namespace slurmfleet::slurm {

// kInvalidInput when a text of the request (its script, a variable, a field) is not UTF-8: JSON
// holds nothing else, and slurmrestd reads JSON.
Result<std::string> EncodeRequest(const JobRequest& request);
// kInvalidInput naming the field when `text` is not what EncodeRequest writes.
Result<JobRequest> DecodeRequest(std::string_view text);

}  // namespace slurmfleet::slurm
