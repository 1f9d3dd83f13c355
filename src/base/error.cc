#include "base/error.h"

namespace slurmfleet {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kInvalidInput:
      return "invalid input";
    case Code::kRejected:
      return "rejected";
    case Code::kAuth:
      return "authentication";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kUnknownOutcome:
      return "unknown outcome";
    case Code::kNotFound:
      return "not found";
    case Code::kConflict:
      return "conflict";
    case Code::kForbidden:
      return "forbidden";
    case Code::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Error::ToString() const { return where.empty() ? message : where + ": " + message; }

}  // namespace slurmfleet
