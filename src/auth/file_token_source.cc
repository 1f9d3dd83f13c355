#include "auth/file_token_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "auth/jwt.h"
#include "base/unique_fd.h"

namespace slurmfleet::auth {
namespace {

// A token is a few hundred bytes; anything this large is the wrong file.
constexpr size_t kMaxFileSize = 1 << 20;

constexpr std::string_view kFix = "write a fresh one (scontrol token) or fix what refreshes it";

}  // namespace

FileTokenSource::FileTokenSource(std::filesystem::path path, const Clock& clock, WarnFn warn)
    : path_(std::move(path)), clock_(clock), warn_(std::move(warn)) {}

FileTokenSource::Stamp FileTokenSource::StampOf(const struct stat& st) {
  return Stamp{st.st_dev, st.st_ino, st.st_size,
               static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

Result<FileTokenSource::Cached> FileTokenSource::Load() const {
  const std::string where = "token file " + path_.string();
  UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    int error = errno;
    if (error == ENOENT) {
      return Fail(Code::kAuth, where + " does not exist; write a token into it (scontrol token)");
    }
    return Fail(Code::kAuth, "cannot read " + where + ": " + ErrnoText(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Fail(Code::kAuth, "cannot read " + where + ": " + ErrnoText(errno));
  }
  if (static_cast<size_t>(st.st_size) > kMaxFileSize) {
    return Fail(Code::kAuth, where + " is larger than 1 MiB; it should hold one token");
  }

  std::string content;
  char buffer[4096];
  while (content.size() <= kMaxFileSize) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(Code::kAuth, "cannot read " + where + ": " + ErrnoText(errno));
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }

  // `scontrol token > file` writes "SLURM_JWT=<token>".
  const std::string_view text = TokenText(content);
  if (text.empty()) {
    return Fail(Code::kAuth, where + " is empty; write a token into it (scontrol token)");
  }
  auto claims = DecodeClaims(text);
  if (!claims) {
    return Fail(Code::kAuth, where + " does not hold a Slurm token (" + claims.error().message +
                                 "); " + std::string(kFix));
  }

  Cached cached;
  cached.stamp = StampOf(st);
  cached.jwt = Secret(std::string(text));
  cached.user = std::move(claims->user);
  cached.expires_at = claims->expires_at;
  return cached;
}

Result<Token> FileTokenSource::Get() {
  std::string warning;
  Result<Token> result;
  {
    std::lock_guard lock(mu_);
    bool reload = stale_ || !cached_;
    if (!reload) {
      struct stat st {};
      if (::stat(path_.c_str(), &st) != 0) {
        reload = true;  // Load() names the reason
      } else {
        reload = StampOf(st) != cached_->stamp;
      }
    }
    if (reload) {
      auto loaded = Load();
      if (!loaded) {
        // Forget the old token: the file no longer vouches for it.
        cached_.reset();
        return std::unexpected(loaded.error());
      }
      // Warn once per token, not once per read: a re-read of the same token keeps the flag.
      if (cached_ && cached_->jwt == loaded->jwt) loaded->warned = cached_->warned;
      cached_ = std::move(*loaded);
      stale_ = false;
    }

    if (cached_->expires_at) {
      auto expires_at = *cached_->expires_at;
      auto left = expires_at - clock_.Now();
      if (left <= std::chrono::seconds::zero()) {
        return Fail(Code::kAuth, "token in " + path_.string() + " expired at " +
                                     FormatUtc(expires_at) + "; " + std::string(kFix));
      }
      if (left < kWarnBefore && !cached_->warned) {
        cached_->warned = true;
        // Rounded up, so the last minute reads "1 min", not "0 min".
        auto minutes = std::chrono::ceil<std::chrono::minutes>(left).count();
        warning = "token in " + path_.string() + " expires in " + std::to_string(minutes) +
                  " min at " + FormatUtc(expires_at) + "; refresh it";
      }
    }
    result = Token{cached_->jwt, cached_->user, cached_->expires_at};
  }
  if (!warning.empty() && warn_) warn_(warning);
  return result;
}

void FileTokenSource::Invalidate() {
  std::lock_guard lock(mu_);
  stale_ = true;
}

std::string FileTokenSource::Describe() const { return "token file " + path_.string(); }

std::string FileTokenSource::FixWhenRejected() const {
  return "write a fresh token into " + path_.string() + " (scontrol token)";
}

}  // namespace slurmfleet::auth
