// Error, Result<T> and Status: the one error currency across component boundaries.
// Nothing in slurmfleet throws across a component boundary; libraries that throw (nlohmann-json,
// yaml-cpp, std::stoi) are caught where their values are decoded and turned into an Error.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace slurmfleet {

// Chosen by what the caller does next, not by where the failure came from.
enum class Code {
  kInvalidInput,    // fix the config or the request; never retried
  kRejected,        // Slurm or Jenkins said no; carries their error text
  kAuth,            // re-read or re-mint the token, then retry once
  kUnavailable,     // refused, 502/503/504, or a timeout on an idempotent call: back off
  kUnknownOutcome,  // a POST may have landed: look before doing it again
  kNotFound,
  kConflict,
  kForbidden,  // not allowed for this caller or place; asking again will not help
  kInternal,
};

std::string_view CodeName(Code code);

struct Error {
  Code code = Code::kInternal;
  std::string message;  // for a human; no trailing period; never contains a secret
  std::string where;    // "templates.gpu.cpus_per_task" or "POST /slurm/v0.0.45/job/submit"

  // "where: message", or just the message when `where` is empty.
  std::string ToString() const;
};

template <typename T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

inline std::unexpected<Error> Fail(Code code, std::string message, std::string where = {}) {
  return std::unexpected(Error{code, std::move(message), std::move(where)});
}

}  // namespace slurmfleet
