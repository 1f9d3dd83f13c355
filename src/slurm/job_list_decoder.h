// Decodes slurmrestd's job answers (GET jobs, GET job/{id}) into the model with simdjson's
// on-demand parser, reading only the fields JobInfo holds. A full job list is about 10 KB per job
// (tens of MB on a busy cluster); this reads it in one pass without building a DOM.
// Pure function; internal to src/slurm/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "slurm/dialect.h"
#include "slurm/job.h"
#include "slurm/response_errors.h"

namespace slurmfleet::slurm {

struct JobListAnswer {
  std::vector<JobInfo> jobs;
  std::optional<uint64_t> last_update;  // unset, infinite or absent: nullopt
  std::vector<SlurmMessage> errors;
  std::vector<SlurmMessage> warnings;
};

// `body` gets spare capacity for simdjson's padding (it may reallocate; its contents stay).
// kInternal naming the JSON path ("jobs[3].job_state") when the answer has another shape.
Result<JobListAnswer> DecodeJobList(const Dialect& dialect, std::string& body);

}  // namespace slurmfleet::slurm
