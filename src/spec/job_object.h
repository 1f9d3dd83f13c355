// Decoding of a raw `job` object (a template's `job:` block, or the `job` of pipeline JSON) into
// a template layer. Fields slurmfleet models are decoded into JobFields; every other field is
// checked against the job_desc_msg schema and kept in JobFields::extra. Pure; no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "spec/job_desc_schema.h"
#include "spec/job_template.h"

namespace slurmfleet::spec {

// The schemas a raw field is checked against. A field passes when any of them accepts it: one
// schema for a pinned API version, all of them for `auto` (the version is only known at submit,
// where the chosen version's schema is checked again).
using SchemaSet = std::span<const JobDescSchema* const>;

// Fields a template may not set: those slurmfleet always sets itself (script, name, comment,
// requeue), and those that would change whom the agent runs as (user_id, group_id) or keep it
// from starting (hold). `environment` is accepted as ["NAME=value", ...] and lands in the layer's
// environment map.
bool IsReservedJobField(std::string_view name);

// Decodes `job` (expected to be an object; `path` is its JSON path, e.g. "job") into `layer`.
// Appends one kInvalidInput Error per problem to `problems`, with `where` = the JSON path of the
// offending value; the fields that decoded cleanly are still stored.
// memory_per_node and time_limit accept a plain integer (MB, minutes) or {"set":true,"number":N}.
void DecodeJobObject(const nlohmann::json& job, const std::string& path, SchemaSet schemas,
                     JobTemplate& layer, std::vector<Error>& problems);

// Checks an environment variable name: a shell identifier, and not one slurmfleet injects
// (JENKINS_URL, JENKINS_SECRET, JENKINS_AGENT_NAME, SLURMFLEET_*). An empty string when fine,
// else what is wrong.
std::string CheckEnvironmentName(std::string_view name);

}  // namespace slurmfleet::spec
