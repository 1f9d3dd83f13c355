// MintingTokenSource: mints its own tokens from Slurm's HS256 key (the jwt_key file named by
// AuthAltParameters in slurm.conf), as `scontrol token` does, so a long-running daemon never waits
// for someone to refresh a token. Whoever can read that key can act as any Slurm user: it is read
// only here and held in a Secret.
//
// The key is read on the first Get() and again after Invalidate() (the key may have been rotated).
// A token is minted on first use, cached, and replaced ahead of expiry: when less than
// RenewBefore() = max(lifespan / 5, 30 s) of it is left (Slurm-web's auto mode), so a request never
// leaves with a token about to expire. A lifespan under 30 s therefore mints on every Get().
//
// Thread safety: safe to call from any thread (one mutex). Keeps a reference to the Clock, which
// must outlive it.
#pragma once

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "auth/token_source.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::auth {

class MintingTokenSource final : public TokenSource {
 public:
  static constexpr std::chrono::seconds kDefaultLifespan{3600};

  // Does not touch the key file: problems are reported by Get(). Tokens are minted for `user` (the
  // `sun` claim) and live for `lifespan` from clock.Now().
  MintingTokenSource(std::filesystem::path key_path, std::string user, const Clock& clock,
                     std::chrono::seconds lifespan = kDefaultLifespan);

  // The cached token, or a freshly minted one when there is none, less than RenewBefore() is left,
  // or Invalidate() was called. kAuth, naming the path, when the key file is missing, unreadable or
  // empty; kInvalidInput when `user` is empty or the lifespan is not positive.
  Result<Token> Get() override;

  // Drops the cached token and the key: the next Get() re-reads the key and mints a new token.
  void Invalidate() override;

  // "minted for ci from /etc/slurm/jwt_hs256.key (lifespan 3600 s)".
  std::string Describe() const override;
  std::string FixWhenRejected() const override;

  // max(lifespan / 5, 30 s).
  std::chrono::seconds RenewBefore() const;

 private:
  // Reads key_path_ into key_. Requires mu_.
  Status LoadKey();

  const std::filesystem::path key_path_;
  const std::string user_;
  const Clock& clock_;
  const std::chrono::seconds lifespan_;

  std::mutex mu_;
  std::optional<Secret> key_;    // guarded by mu_; empty until read, and after Invalidate()
  std::optional<Token> cached_;  // guarded by mu_; the last minted token
};

}  // namespace slurmfleet::auth
