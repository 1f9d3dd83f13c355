// ApiTokens: the bearer tokens clients of the REST API present, read from one file.
//
// File format, one token per line:
//
//   # comment
//   <scope> <name> <token>
//
// Fields are separated by spaces or tabs. `scope` is `read` (GET endpoints), `templates` (GET
// endpoints and the ephemeral templates' register, touch and release: the token a Jenkins
// controller's pipelines hold, which cannot submit or cancel jobs) or `admin` (every endpoint).
// `name` identifies the client in access logs and becomes a submission's default owner: letters,
// digits and `._@-`, unique in the file. `token` is at least 16 characters with no whitespace,
// unique in the file (e.g. `openssl rand -hex 32`). Blank lines and lines starting with `#` are
// ignored. The file must not be accessible by group or others (chmod 600). A file with no tokens is
// valid: only the unauthenticated endpoints (health, ready) then answer.
//
// Tokens are compared in constant time: the presented token and every stored one are hashed with
// SHA-256 and the digests compared with CRYPTO_memcmp, so neither the content nor the length of a
// stored token leaks through timing.
//
// Thread safety: Authorize() and Reload() may be called from any thread at any time; a reload
// swaps the whole table at once, so a request sees either the old tokens or the new ones.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::server {

enum class Scope {
  kRead,       // GET endpoints
  kTemplates,  // kRead and the ephemeral templates' endpoints
  kAdmin,      // everything; implies the others
};

std::string_view ScopeName(Scope scope);  // "read", "templates", "admin"

// Whether a token of scope `held` may call an endpoint that needs `needed`.
bool Grants(Scope held, Scope needed);

// Who presented a valid token.
struct Principal {
  std::string name;
  Scope scope = Scope::kRead;
  bool operator==(const Principal&) const = default;
};

// True when a and b are equal. Takes the same time for any two inputs of any lengths: both are
// hashed with SHA-256 and the digests compared with CRYPTO_memcmp.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

class ApiTokens {
 public:
  // Reads `path`. kInvalidInput naming the path and the fix when it is missing, unreadable,
  // accessible by group or others (`chmod 600 <path>`), or larger than 1 MiB; kInvalidInput with
  // where = "<path>:<line>" for a malformed line. Messages never contain a token.
  static Result<std::unique_ptr<ApiTokens>> Load(std::filesystem::path path);

  // No token file configured: authorizes nobody, so only the unauthenticated endpoints answer.
  // Reload() is then a no-op that succeeds.
  static std::unique_ptr<ApiTokens> None();

  // The principal whose token equals `bearer`, or nullopt (also for an empty `bearer`).
  std::optional<Principal> Authorize(std::string_view bearer) const;

  // Re-reads the file (for SIGHUP). On error the current tokens stay in force and the error is
  // returned, as Load() would report it.
  Status Reload();

  // How many tokens are in force.
  size_t size() const;

  // The file read; empty for None().
  const std::filesystem::path& path() const { return path_; }

 private:
  using Digest = std::array<uint8_t, 32>;
  struct Entry {
    Principal principal;
    Secret token;
    Digest digest;  // SHA-256 of token
  };
  using Table = std::vector<Entry>;

  explicit ApiTokens(std::filesystem::path path) : path_(std::move(path)) {}

  static Result<std::shared_ptr<const Table>> Read(const std::filesystem::path& path);

  const std::filesystem::path path_;
  mutable std::mutex mu_;
  std::shared_ptr<const Table> table_;  // guarded by mu_; never null after Load()
};

}  // namespace slurmfleet::server
