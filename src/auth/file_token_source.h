// FileTokenSource: a token kept fresh in a file by something else (a cron job running
// `scontrol token lifespan=...`, a Kubernetes secret mount). The file holds either the bare token
// or scontrol's own output line `SLURM_JWT=<token>`; surrounding whitespace is ignored.
//
// The file is read on the first Get(), again whenever its identity, size or mtime changes, and
// once more after Invalidate(). The token's `exp` claim is checked on every Get(), so an expiring
// token is reported before slurmrestd rejects it.
//
// Thread safety: safe to call from any thread (one mutex). The warn callback is called without the
// mutex held, so it may call back into this source. Keeps a reference to the Clock, which must
// outlive it.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "auth/token_source.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::auth {

class FileTokenSource final : public TokenSource {
 public:
  // Gets one line for a human, e.g. "token in /etc/slurmfleet/jwt expires in 7 min at
  // 2026-11-30T06:00:00Z; refresh it". Never contains the token.
  using WarnFn = std::function<void(std::string_view message)>;

  // Tokens with less than this left are still returned, with a warning.
  static constexpr std::chrono::minutes kWarnBefore{10};

  // Does not touch the file: problems are reported by Get(). `warn` may be empty.
  FileTokenSource(std::filesystem::path path, const Clock& clock, WarnFn warn);

  // The file's token, with its `sun` and `exp` claims. kAuth, naming the path and the fix, when the
  // file is missing, unreadable or empty, does not hold a JWT, or holds one that has expired by
  // clock.Now(). Calls warn once per distinct token when less than kWarnBefore is left.
  Result<Token> Get() override;

  // The next Get() re-reads the file even if it looks unchanged.
  void Invalidate() override;

  // "token file /path".
  std::string Describe() const override;
  std::string FixWhenRejected() const override;

 private:
  // What identifies one version of the file without reading it.
  struct Stamp {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };

  struct Cached {
    Stamp stamp;
    Secret jwt;
    std::string user;
    std::optional<std::chrono::sys_seconds> expires_at;
    bool warned = false;  // the near-expiry warning for this token has been given
  };

  static Stamp StampOf(const struct stat& st);

  // Reads and parses the file. The Stamp is taken from the open file, so it matches the content.
  Result<Cached> Load() const;

  const std::filesystem::path path_;
  const Clock& clock_;
  const WarnFn warn_;

  std::mutex mu_;
  std::optional<Cached> cached_;  // guarded by mu_; the last successful read
  bool stale_ = true;             // guarded by mu_; re-read even if the stamp is unchanged
};

}  // namespace slurmfleet::auth
