#include "auth/minting_token_source.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "auth/jwt.h"
#include "base/unique_fd.h"

namespace slurmfleet::auth {
namespace {

// Slurm's keys are 32 to a few hundred bytes; anything this large is the wrong file.
constexpr size_t kMaxKeySize = 1 << 20;

constexpr std::chrono::seconds kMinRenewBefore{30};

}  // namespace

MintingTokenSource::MintingTokenSource(std::filesystem::path key_path, std::string user,
                                       const Clock& clock, std::chrono::seconds lifespan)
    : key_path_(std::move(key_path)), user_(std::move(user)), clock_(clock), lifespan_(lifespan) {}

std::chrono::seconds MintingTokenSource::RenewBefore() const {
  return std::max(lifespan_ / 5, kMinRenewBefore);
}

Status MintingTokenSource::LoadKey() {
  const std::string what = "jwt key " + key_path_.string();
  const std::string fix =
      "it must be the jwt_key file named by AuthAltParameters in slurm.conf, readable by this user";
  int fd = ::open(key_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT) return Fail(Code::kAuth, what + " does not exist; " + fix);
    return Fail(Code::kAuth, "cannot read " + what + ": " + ErrnoText(error) + "; " + fix);
  }
  // Slurm keys the HMAC with the file's exact bytes, trailing newline included: no trimming.
  std::string bytes;
  char buffer[4096];
  int error = 0;
  while (bytes.size() <= kMaxKeySize) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  OPENSSL_cleanse(buffer, sizeof(buffer));
  Secret key(std::move(bytes));
  if (error != 0) {
    return Fail(Code::kAuth, "cannot read " + what + ": " + ErrnoText(error) + "; " + fix);
  }
  if (key.empty()) return Fail(Code::kAuth, what + " is empty; " + fix);
  if (key.Reveal().size() > kMaxKeySize) {
    return Fail(Code::kAuth, what + " is larger than 1 MiB; " + fix);
  }
  key_ = std::move(key);
  return {};
}

Result<Token> MintingTokenSource::Get() {
  if (user_.empty()) {
    return Fail(Code::kInvalidInput,
                "cannot mint tokens from " + key_path_.string() + ": no user name given");
  }
  if (lifespan_ <= std::chrono::seconds::zero()) {
    return Fail(Code::kInvalidInput,
                "token lifespan must be positive, not " + std::to_string(lifespan_.count()) + " s");
  }
  std::lock_guard lock(mu_);
  auto now = std::chrono::floor<std::chrono::seconds>(clock_.Now());
  if (cached_ && cached_->expires_at && *cached_->expires_at - now >= RenewBefore()) {
    return *cached_;
  }
  if (!key_) {
    if (auto loaded = LoadKey(); !loaded) return std::unexpected(loaded.error());
  }
  auto expires_at = now + lifespan_;
  auto jwt = MintHs256(*key_, user_, now, expires_at);
  if (!jwt) return std::unexpected(jwt.error());
  cached_ = Token{std::move(*jwt), user_, expires_at};
  return *cached_;
}

void MintingTokenSource::Invalidate() {
  std::lock_guard lock(mu_);
  cached_.reset();
  key_.reset();
}

std::string MintingTokenSource::Describe() const {
  return "minted for " + user_ + " from " + key_path_.string() + " (lifespan " +
         std::to_string(lifespan_.count()) + " s)";
}

std::string MintingTokenSource::FixWhenRejected() const {
  return "check that " + key_path_.string() +
         " is slurmctld's JWT key (AuthAltParameters=jwt_key=... in slurm.conf) and that "
         "slurmctld knows user " +
         user_;
}

}  // namespace slurmfleet::auth
