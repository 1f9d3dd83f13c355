// The few JWT operations slurmfleet needs: base64url, reading a token's claims without verifying
// it (to learn its expiry and user), and minting an HS256 token the way Slurm's `scontrol token`
// does. Pure functions: no clock, no files, safe from any thread.
//
// No function here puts a token, a key or any part of them into an Error message.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/secret.h"

namespace slurmfleet::auth {

// RFC 4648 §5 base64url without padding, as JWTs use it.
std::string Base64UrlEncode(std::string_view bytes);

// The inverse of Base64UrlEncode. kInvalidInput for '=' padding, any character outside
// [A-Za-z0-9_-], or a length no encoding produces (4n+1). Unused low bits of the last character are
// ignored rather than rejected, as most JWT libraries do.
Result<std::string> Base64UrlDecode(std::string_view text);

// The claims slurmfleet reads from a token. Absent claims stay empty.
struct JwtClaims {
  std::optional<std::chrono::sys_seconds> expires_at;  // `exp`
  std::optional<std::chrono::sys_seconds> issued_at;   // `iat`
  std::string user;                                    // `sun`, Slurm's user-name claim
};

// Reads the claims of `jwt` (header.payload.signature) WITHOUT verifying its signature: the result
// says what the token claims, not that Slurm will accept it. Only the expiry and user are taken
// from it, to report problems before slurmrestd does.
// kInvalidInput when `jwt` is not three base64url parts, the header or payload is not a JSON
// object, or `exp`/`iat` is present but not a number, or `sun` is present but not a string.
Result<JwtClaims> DecodeClaims(std::string_view jwt);

// The token in what `scontrol token` printed, as users export it or write it to a file: without
// surrounding whitespace and without scontrol's "SLURM_JWT=" prefix. Empty when nothing is left.
std::string_view TokenText(std::string_view printed);

// Mints an HS256 JWT as Slurm's `scontrol token` does: header {"alg":"HS256","typ":"JWT"},
// payload {"exp":...,"iat":...,"sun":user} (compact JSON, keys in that order), signed with
// HMAC-SHA256 keyed by the raw bytes of Slurm's jwt_key file (not trimmed: Slurm uses the file's
// bytes as they are).
// kInvalidInput when `key` or `user` is empty, or `user` is not valid UTF-8; kInternal if OpenSSL
// fails.
Result<Secret> MintHs256(const Secret& key, std::string_view user,
                         std::chrono::sys_seconds issued_at, std::chrono::sys_seconds expires_at);

// "2023-11-14T22:13:20Z": how expiry times appear in messages.
std::string FormatUtc(std::chrono::sys_seconds time);

}  // namespace slurmfleet::auth
