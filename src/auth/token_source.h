// A TokenSource hands out the JWT that authenticates us to slurmrestd. Implementations: a token
// file (file_token_source.h), the SLURM_JWT environment variable (env_token_source.h) and minting
// from Slurm's HS256 jwt_key (minting_token_source.h). Implementations are safe to call from any
// thread. The token itself is a Secret: it never reaches a log, an error or --json output.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::auth {

struct Token {
  Secret jwt;
  std::string user;  // the `sun` claim; empty when the token does not carry one
  std::optional<std::chrono::system_clock::time_point> expires_at;  // the `exp` claim
};

class TokenSource {
 public:
  virtual ~TokenSource() = default;

  // The token to use now. Re-reads or re-mints as the source requires. kAuth when no usable token
  // can be had (file missing, token expired, key unreadable), with a message that says how to fix
  // it.
  virtual Result<Token> Get() = 0;

  // Slurm rejected the last token: the next Get() re-reads the file or mints a new token.
  virtual void Invalidate() = 0;

  // "token file /etc/slurmfleet/jwt", "environment SLURM_JWT", "minted for ci from
  // /etc/slurm/jwt_hs256.key".
  virtual std::string Describe() const = 0;

  // What to do when Slurm rejects this source's token, for the end of the message that says so:
  // "write a fresh token into /etc/slurmfleet/jwt (scontrol token)". Refreshing cannot help a
  // minted token: its key is not slurmctld's.
  virtual std::string FixWhenRejected() const { return "refresh it"; }
};

}  // namespace slurmfleet::auth
