// How slurmrestd says no: the HTTP status plus the errors[]/warnings[] of its JSON body. Turns a
// response into an Error with Slurm's own words. Internal to src/slurm/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"

namespace slurmfleet::slurm {

struct SlurmMessage {
  int error_number = 0;     // 0 for warnings
  std::string error;        // Slurm's short text ("Invalid job id specified")
  std::string description;  // the longer text, often the more useful one
  std::string source;       // a JSON pointer like "#/job/cpus_per_task/" or a function name
};

std::vector<SlurmMessage> ErrorsOf(const nlohmann::json& body);
std::vector<SlurmMessage> WarningsOf(const nlohmann::json& body);

// "[2017] Invalid job id specified" or "Unknown signal (null) (at #/signal/)".
std::string Describe(const SlurmMessage& m);
// All of them, joined by "; ".
std::string DescribeAll(const std::vector<SlurmMessage>& ms);

// The Error for a non-2xx answer. `idempotent` decides whether a 5xx is kUnavailable (safe to
// retry) or kUnknownOutcome (a POST may have taken effect).
// `fix_when_rejected` ends the message of a rejected token (TokenSource::FixWhenRejected).
Error ErrorForStatus(long status, const std::string& body, bool idempotent,
                     const std::string& where, const std::string& fix_when_rejected = "refresh it");

// Slurm's "Protocol authentication error" (bad, expired or mismatched token).
inline constexpr int kSlurmAuthError = 1007;
inline constexpr int kSlurmInvalidJobId = 2017;
inline constexpr int kSlurmAlreadyDone = 2021;
// slurmctld's ESLURM_* errors: it handled the request and refused it.
inline constexpr int kSlurmctldErrorsBegin = 2000;
inline constexpr int kSlurmctldErrorsEnd = 3000;

}  // namespace slurmfleet::slurm
