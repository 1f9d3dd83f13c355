#include "auth/env_token_source.h"

#include <cstdlib>
#include <utility>

namespace slurmfleet::auth {

EnvTokenSource::Lookup EnvTokenSource::ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

EnvTokenSource::EnvTokenSource(std::string variable, const Lookup& lookup, const Clock& clock,
                               const std::string& named_by)
    : variable_(std::move(variable)), clock_(clock) {
  const std::optional<std::string> value = lookup(variable_);
  // `export SLURM_JWT=$(scontrol token)` leaves scontrol's "SLURM_JWT=" prefix in the value.
  const std::string_view text = value ? TokenText(*value) : std::string_view();
  if (text.empty()) {
    // A variable that is set proves its name is one; an unset one may be a pasted token.
    const std::string what = value ? variable_ + " is empty"
                             : named_by.empty()
                                 ? variable_ + " is not set"
                                 : "the variable named by " + named_by + " is not set";
    claims_ = Fail(Code::kAuth, what +
                                    "; export a token (export $(scontrol token)) or configure "
                                    "a token file or jwt key");
    return;
  }
  jwt_ = Secret(std::string(text));
  claims_ = DecodeClaims(text);
  if (!claims_) {
    claims_ =
        Fail(Code::kAuth, variable_ + " does not hold a Slurm token (" + claims_.error().message +
                              "); export a fresh one (scontrol token)");
  }
}

Result<Token> EnvTokenSource::Get() {
  if (!claims_) return std::unexpected(claims_.error());
  // Expiry first: it is the likelier reason for a rejection, and its message says when.
  if (claims_->expires_at && *claims_->expires_at <= clock_.Now()) {
    return Fail(Code::kAuth, "token in " + variable_ + " expired at " +
                                 FormatUtc(*claims_->expires_at) +
                                 "; export a fresh one (scontrol token)");
  }
  std::lock_guard lock(mu_);
  if (rejected_) {
    return Fail(Code::kAuth,
                "the token in " + variable_ + " was rejected; export a fresh one (scontrol token)");
  }
  return Token{jwt_, claims_->user, claims_->expires_at};
}

void EnvTokenSource::Invalidate() {
  std::lock_guard lock(mu_);
  rejected_ = true;
}

std::string EnvTokenSource::Describe() const { return "environment " + variable_; }

std::string EnvTokenSource::FixWhenRejected() const {
  return "set " + variable_ + " to a fresh token (scontrol token)";
}

}  // namespace slurmfleet::auth
