// The job_desc_msg schema of each slurmrestd API version, reduced to what a type check needs:
// field name -> JSON kind (plus enum values and nested fields). The tables are generated from
// the OpenAPI documents by gen_job_desc_schema.py into job_desc_schema_data.cc; they are
// constant data, safe to read from any thread.
//
// Used to check the raw `job` objects users write in templates and pipeline JSON before they
// reach Slurm, so a typo fails at `validate` time with a JSON path instead of as a 422 at submit.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace slurmfleet::spec {

enum class FieldKind {
  kString,
  kInt32,
  kInt64,
  kBool,
  kNumber,
  kStringArray,  // ["a", "b"]
  kCsvString,    // ["a", "b"] or "a,b" (slurmrestd parses both)
  kFlags,        // an array of enum strings, e.g. mail_type ["BEGIN", "END"]
  kNoValInt,     // {"set": true, "infinite": false, "number": N}, or a plain integer N
  kObject,       // nested fields (rlimits, crontab, ...)
  kAnyArray,     // an array of anything (deprecated fields only)
};

struct FieldSchema {
  std::string_view name;
  FieldKind kind;
  std::span<const std::string_view> enum_values;  // kFlags only
  std::span<const FieldSchema> fields;            // kObject only
  bool deprecated;
};

struct JobDescSchema {
  std::string_view version;  // "v0.0.45"
  std::span<const FieldSchema> fields;
};

// Every version we have a schema for, newest first (the same versions slurm/dialect.h speaks).
std::span<const JobDescSchema> AllJobDescSchemas();
// nullptr for a version without a schema.
const JobDescSchema* FindJobDescSchema(std::string_view version);
// The field of that name, or nullptr.
const FieldSchema* FindField(std::span<const FieldSchema> fields, std::string_view name);

// Checks one job_desc field. Appends one kInvalidInput Error per problem to `problems`, each with
// `where` = the JSON path of the offending value (`path` is the path of `value` itself, e.g.
// "job.mail_type"). An unknown field name is a problem; the message suggests the nearest known
// name when one is close.
void CheckJobDescField(const JobDescSchema& schema, std::string_view name,
                       const nlohmann::json& value, const std::string& path,
                       std::vector<Error>& problems);

// The same against several schemas (one per API version the job may be sent with): fine when any
// of them accepts the field; otherwise the problems the first one (the newest) reports.
void CheckJobDescFieldInAny(std::span<const JobDescSchema* const> schemas, std::string_view name,
                            const nlohmann::json& value, const std::string& path,
                            std::vector<Error>& problems);

// Checks every field of `fields` (a job_desc object whose modelled fields were already taken
// out, as slurm::JobRequest::extra_fields) for API `version`, or for every version when it is
// not known yet. The first problem, with where = `path`.<field>; ok when all pass. Slurm itself
// only warns about an unknown field and runs the job without it, so a typo must stop here.
Status CheckJobDescFields(const nlohmann::json& fields, std::string_view version,
                          const std::string& path);

}  // namespace slurmfleet::spec
