// Exit codes shared by every subcommand, so scripts can tell failures apart.
#pragma once

#include "base/error.h"

namespace slurmfleet::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the operation failed (job rejected, not found, ...)
inline constexpr int kExitUsage = 2;        // bad command line
inline constexpr int kExitConfig = 3;       // bad configuration or input file
inline constexpr int kExitAuth = 4;         // the token was rejected or cannot be had
inline constexpr int kExitUnreachable = 5;  // slurmrestd (or Jenkins) did not answer
// --follow-timeout passed with the job still queued or running: not a failure of the job, nor
// an outage, and a script may well go on waiting
inline constexpr int kExitStillRunning = 6;

// The exit code for an error, by what the user must do about it.
inline int ExitCodeFor(const Error& error) {
  switch (error.code) {
    case Code::kInvalidInput:
      return kExitConfig;
    case Code::kAuth:
      return kExitAuth;
    case Code::kUnavailable:
    case Code::kUnknownOutcome:
      return kExitUnreachable;
    default:
      return kExitFailure;
  }
}

}  // namespace slurmfleet::cli
