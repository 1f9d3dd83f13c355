#include "server/api_tokens.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "base/unique_fd.h"

namespace slurmfleet::server {
namespace {

// A token file holds a few lines; anything this large is the wrong file.
constexpr size_t kMaxFileSize = 1 << 20;
constexpr size_t kMinTokenLength = 16;
constexpr std::string_view kBlank = " \t\r";
constexpr std::string_view kFormat = "expected `<scope> <name> <token>`";

std::array<uint8_t, 32> Sha256(std::string_view data) {
  std::array<uint8_t, 32> digest{};
  static_assert(SHA256_DIGEST_LENGTH == 32);
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
}

// Splits on spaces and tabs. Never fails; the caller checks the count.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (true) {
    size_t begin = line.find_first_not_of(kBlank, pos);
    if (begin == std::string_view::npos) break;
    size_t end = line.find_first_of(kBlank, begin);
    if (end == std::string_view::npos) end = line.size();
    fields.push_back(line.substr(begin, end - begin));
    pos = end;
  }
  return fields;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string_view ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kRead:
      return "read";
    case Scope::kTemplates:
      return "templates";
    case Scope::kAdmin:
      return "admin";
  }
  return "read";
}

bool Grants(Scope held, Scope needed) {
  return held == needed || held == Scope::kAdmin || needed == Scope::kRead;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  auto da = Sha256(a);
  auto db = Sha256(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

Result<std::unique_ptr<ApiTokens>> ApiTokens::Load(std::filesystem::path path) {
  auto table = Read(path);
  if (!table) return std::unexpected(table.error());
  std::unique_ptr<ApiTokens> tokens(new ApiTokens(std::move(path)));
  tokens->table_ = std::move(*table);
  return tokens;
}

std::unique_ptr<ApiTokens> ApiTokens::None() {
  std::unique_ptr<ApiTokens> tokens(new ApiTokens({}));
  tokens->table_ = std::make_shared<const Table>();
  return tokens;
}

Status ApiTokens::Reload() {
  if (path_.empty()) return {};
  auto table = Read(path_);
  if (!table) return std::unexpected(table.error());
  std::lock_guard lock(mu_);
  table_ = std::move(*table);
  return {};
}

size_t ApiTokens::size() const {
  std::lock_guard lock(mu_);
  return table_->size();
}

std::optional<Principal> ApiTokens::Authorize(std::string_view bearer) const {
  if (bearer.empty()) return std::nullopt;
  std::shared_ptr<const Table> table;
  {
    std::lock_guard lock(mu_);
    table = table_;
  }
  const Digest presented = Sha256(bearer);
  // Compare against every entry, without stopping at a match, so timing does not tell which line
  // (or whether any) matched.
  const Entry* match = nullptr;
  for (const Entry& entry : *table) {
    bool equal = CRYPTO_memcmp(presented.data(), entry.digest.data(), presented.size()) == 0;
    if (equal) match = &entry;
  }
  if (match == nullptr) return std::nullopt;
  return match->principal;
}

Result<std::shared_ptr<const ApiTokens::Table>> ApiTokens::Read(const std::filesystem::path& path) {
  const std::string file = path.string();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    int error = errno;
    if (error == ENOENT) {
      return Fail(Code::kInvalidInput,
                  "API token file " + file +
                      " does not exist; create it (mode 0600) with lines `<scope> <name> <token>`");
    }
    return Fail(Code::kInvalidInput,
                "cannot read API token file " + file + ": " + ErrnoText(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Fail(Code::kInvalidInput,
                "cannot read API token file " + file + ": " + ErrnoText(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Fail(Code::kInvalidInput, "API token file " + file + " is not a regular file");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return Fail(Code::kInvalidInput, "API token file " + file +
                                         " is accessible by group or others (mode " +
                                         Mode(st.st_mode) + "); run `chmod 600 " + file + "`");
  }
  if (static_cast<size_t>(st.st_size) > kMaxFileSize) {
    return Fail(Code::kInvalidInput, "API token file " + file + " is larger than 1 MiB");
  }

  std::string content;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Fail(Code::kInvalidInput,
                  "cannot read API token file " + file + ": " + ErrnoText(errno));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (content.size() > kMaxFileSize) {
      return Fail(Code::kInvalidInput, "API token file " + file + " is larger than 1 MiB");
    }
  }

  auto table = std::make_shared<Table>();
  std::unordered_map<std::string, int> line_of_name;
  std::vector<int> line_of_entry;
  std::string_view rest = content;
  int line_number = 0;
  // Messages below never quote a field: a misplaced token would end up in a log.
  while (!rest.empty()) {
    ++line_number;
    size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    const std::string where = file + ":" + std::to_string(line_number);

    auto fields = Fields(line);
    if (fields.empty() || fields[0].starts_with('#')) continue;
    if (fields.size() != 3) {
      return Fail(Code::kInvalidInput,
                  std::string(kFormat) + ", got " + std::to_string(fields.size()) + " field" +
                      (fields.size() == 1 ? "" : "s"),
                  where);
    }
    Scope scope;
    if (fields[0] == "read") {
      scope = Scope::kRead;
    } else if (fields[0] == "templates") {
      scope = Scope::kTemplates;
    } else if (fields[0] == "admin") {
      scope = Scope::kAdmin;
    } else {
      return Fail(
          Code::kInvalidInput,
          "the first field (scope) must be `read`, `templates` or `admin`; " + std::string(kFormat),
          where);
    }
    std::string name(fields[1]);
    if (!ValidName(name)) {
      return Fail(Code::kInvalidInput,
                  "the second field (name) may hold only letters, digits and `._@-`, at most 128 "
                  "characters; " +
                      std::string(kFormat),
                  where);
    }
    if (auto it = line_of_name.find(name); it != line_of_name.end()) {
      return Fail(Code::kInvalidInput,
                  "name '" + name + "' is already used on line " + std::to_string(it->second) +
                      "; give each token its own name",
                  where);
    }
    std::string_view token = fields[2];
    if (token.size() < kMinTokenLength) {
      return Fail(Code::kInvalidInput,
                  "the token is shorter than " + std::to_string(kMinTokenLength) +
                      " characters; make one with `openssl rand -hex 32`",
                  where);
    }
    Digest digest = Sha256(token);
    for (size_t i = 0; i < table->size(); ++i) {
      if ((*table)[i].digest == digest) {
        return Fail(Code::kInvalidInput,
                    "the token is the same as on line " + std::to_string(line_of_entry[i]) +
                        "; give each client its own token",
                    where);
      }
    }
    line_of_name.emplace(name, line_number);
    line_of_entry.push_back(line_number);
    table->push_back(Entry{Principal{std::move(name), scope}, Secret(std::string(token)), digest});
  }
  return std::shared_ptr<const Table>(std::move(table));
}

}  // namespace slurmfleet::server
