// EnvTokenSource: the token a user exported as SLURM_JWT (`export $(scontrol token)`), for the CLI
// and for quick trials. The variable is read once, at construction, through an injected lookup, so
// tests never touch the process environment. It cannot renew the token: when the token expires or
// Slurm rejects it, Get() says so and how to get a fresh one.
//
// Thread safety: safe to call from any thread. Owns a copy of the token; keeps a reference to the
// Clock, which must outlive it.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "auth/jwt.h"
#include "auth/token_source.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::auth {

class EnvTokenSource final : public TokenSource {
 public:
  // getenv-like: the variable's value, or nullopt when it is not set.
  using Lookup = std::function<std::optional<std::string>(std::string_view name)>;

  // A Lookup over the real process environment, for the composition root (std::getenv).
  static Lookup ProcessEnvironment();

  // Reads `variable` through `lookup` now; `lookup` is not kept. Surrounding whitespace and
  // scontrol's "SLURM_JWT=" prefix (left by `export SLURM_JWT=$(scontrol token)`) are dropped.
  // Never fails: a missing, empty or malformed value is reported by Get(). `named_by`, when not
  // empty, is the configuration key that gave `variable` ("batch.credentials.jwtEnv"): when no
  // such variable is set, the error names that key instead of `variable`, which may then be a
  // token pasted where the variable's name belongs.
  EnvTokenSource(std::string variable, const Lookup& lookup, const Clock& clock,
                 const std::string& named_by = "");

  // The token, with its `sun` and `exp` claims. kAuth, naming the variable and the fix, when it is
  // not set or empty, is not a JWT, or has expired by clock.Now(). Once Invalidate() has been
  // called, kAuth "the token in SLURM_JWT was rejected; export a fresh one (scontrol token)": the
  // token cannot change, so retrying with it would only fail again, and this error (which a
  // caller's retry after Invalidate() gets from Get()) tells the user what to do instead.
  Result<Token> Get() override;

  // Cannot renew: records that Slurm rejected the token, for Get() to report.
  void Invalidate() override;

  // "environment SLURM_JWT".
  std::string Describe() const override;
  std::string FixWhenRejected() const override;

 private:
  const std::string variable_;
  const Clock& clock_;
  // Set once by the constructor, then only read.
  Secret jwt_;
  Result<JwtClaims> claims_;  // or why the value is not usable

  std::mutex mu_;
  bool rejected_ = false;  // guarded by mu_
};

}  // namespace slurmfleet::auth
