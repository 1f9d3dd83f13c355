#include "slurm/request_codec.h"

#include <nlohmann/json.hpp>

#include "slurm/dialect.h"

namespace slurmfleet::slurm {

// The job_desc fields we set are the same in every version we speak, so the newest dialect's
// encoding serves as the storage form.
Result<std::string> EncodeRequest(const JobRequest& request) {
  nlohmann::json secrets = nlohmann::json::array();
  for (const EnvVar& v : request.environment) {
    if (v.secret) secrets.push_back(v.name);
  }
  nlohmann::json j = {
      {"job", EncodeJobDesc(AllDialects().front(), request, /*redact_secrets=*/false)},
      {"secret_env", std::move(secrets)}};
  try {
    return j.dump();
  } catch (const nlohmann::json::type_error&) {
    return Fail(Code::kInvalidInput,
                "the job holds text that is not UTF-8 (in its script, environment or another "
                "field); convert it to UTF-8",
                "request");
  }
}

Result<JobRequest> DecodeRequest(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("job")) {
    return Fail(Code::kInvalidInput, "stored request is not a {job, secret_env} object", "request");
  }
  Result<JobRequest> r = JobRequestFromJobDesc(j["job"], "request.job");
  if (!r) return r;
  if (auto s = j.find("secret_env"); s != j.end() && s->is_array()) {
    for (const nlohmann::json& name : *s) {
      for (EnvVar& v : r->environment) {
        if (name.is_string() && v.name == name.get<std::string>()) v.secret = true;
      }
    }
  }
  return r;
}

}  // namespace slurmfleet::slurm
