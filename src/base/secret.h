// A Secret holds a credential (JWT, API token, agent secret, signing key). It prints as "***" and
// has no implicit conversion to string, so it cannot slip into a log line, an error message or
// --json output by accident: reading it takes an explicit Reveal().
#pragma once

#include <ostream>
#include <string>
#include <utility>

namespace slurmfleet {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}

  // The only way to the plain value: call it exactly where the value goes on the wire.
  const std::string& Reveal() const { return value_; }
  bool empty() const { return value_.empty(); }

  bool operator==(const Secret&) const = default;

  static constexpr const char* kRedacted = "***";

 private:
  std::string value_;
};

inline std::ostream& operator<<(std::ostream& os, const Secret&) { return os << Secret::kRedacted; }

}  // namespace slurmfleet
