// The inline pipeline JSON format: {"job": {...}, "pyxis": {...}, "agent": {...}}, the `json`
// argument of the slurm declarative agent and the slurmJobTemplate step. It becomes the last,
// winning layer over the cloud defaults and the named template. Pure; no I/O.
#pragma once

#include <string_view>

#include "base/error.h"
#include "spec/job_object.h"
#include "spec/job_template.h"

namespace slurmfleet::spec {

// Parses `text` into a template layer (name and inherit_from left empty).
//   job:   job_desc fields (see job_object.h), checked against `schemas`
//   pyxis: containerImage, containerMountHome, containerMounts, containerWorkdir,
//          containerWritable, containerRemap, containerName
//   agent: java_path, jar_path, download_jar, setup_script
// Unknown keys at any level are errors. On failure: kInvalidInput. With one problem, `where` is
// its JSON path ("job.cpus_per_task"); with several, `where` is "json" and the message lists
// every problem on its own line, each with its path.
Result<JobTemplate> ParseInlineJson(std::string_view text, SchemaSet schemas);

}  // namespace slurmfleet::spec
