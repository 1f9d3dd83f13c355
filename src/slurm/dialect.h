// A Dialect is everything that differs between slurmrestd API versions, one row per version.
// The REST client is written once against this table; JSON never leaves src/slurm/.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"
#include "slurm/job.h"

namespace slurmfleet::slurm {

struct Dialect {
  std::string_view version;  // "v0.0.45"
  bool has_sluid;            // job_info.step_id.sluid exists (v0.0.44+)
  bool has_stdout_expanded;  // job_info.stdout_expanded and stderr_expanded exist (v0.0.43+)
  bool deprecated;           // v0.0.42: deprecated in 26.05, gone in 26.11

  // "/slurm/v0.0.45" + path.
  std::string Path(std::string_view path) const;
};

// Newest first: `auto` takes the first version the server answers, so a deprecated version is
// chosen only when nothing newer answers.
std::span<const Dialect> AllDialects();
// nullptr for a version we do not speak.
const Dialect* FindDialect(std::string_view version);
// "v0.0.42, v0.0.43, v0.0.44, v0.0.45", for error messages.
std::string SupportedVersions();

// Model -> job_desc_msg for this dialect. `redact_secrets` replaces secret environment values by
// "***" (for printing); the request actually sent uses false.
nlohmann::json EncodeJobDesc(const Dialect& dialect, const JobRequest& request,
                             bool redact_secrets);
// The body of POST job/submit: {"job": ...}, or {"script": ..., "jobs": [...]} for a het job.
nlohmann::json EncodeSubmit(const Dialect& dialect, std::span<const JobRequest> components,
                            bool redact_secrets);

// A job_desc object written by a person (a `jobs submit --job` file, a template's raw `job`) ->
// model: the fields JobRequest has are taken out and typed ({"set":true,"number":N} and plain N
// both accepted), every other field stays in extra_fields. kInvalidInput naming the field on a
// wrong type or a number out of its range (job.h: kCountRange...; memory_per_node may be 0).
Result<JobRequest> JobRequestFromJobDesc(const nlohmann::json& desc, const std::string& where);

}  // namespace slurmfleet::slurm
