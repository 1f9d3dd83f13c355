#include "auth/jwt.h"

#include <openssl/evp.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

namespace slurmfleet::auth {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// The base64url value of each byte, or -1 for bytes outside the alphabet.
constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  table.fill(-1);
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}
constexpr std::array<int8_t, 256> kDecodeTable = MakeDecodeTable();

constexpr std::string_view kWhitespace = " \t\r\n\v\f";

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(kWhitespace);
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(kWhitespace);
  return text.substr(begin, end - begin + 1);
}

// Slurm's header, byte for byte as libjwt writes it (compact, keys sorted).
constexpr std::string_view kHs256Header = R"({"alg":"HS256","typ":"JWT"})";

// Decodes one base64url part of a token into a JSON object. `part` names it in errors ("header",
// "payload"); the text itself never appears in an error, since it is part of a credential.
Result<nlohmann::json> DecodeJsonPart(std::string_view text, std::string_view part) {
  auto bytes = Base64UrlDecode(text);
  if (!bytes) {
    return Fail(Code::kInvalidInput, "not a JWT: its " + std::string(part) + " is not base64url (" +
                                         bytes.error().message + ")");
  }
  // parse(..., allow_exceptions=false) yields a `discarded` value instead of throwing.
  nlohmann::json json = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Fail(Code::kInvalidInput,
                "not a JWT: its " + std::string(part) + " is not a JSON object");
  }
  return json;
}

// A NumericDate claim (RFC 7519 §2): seconds since the epoch, possibly fractional.
Result<std::optional<std::chrono::sys_seconds>> NumericDate(const nlohmann::json& payload,
                                                            const char* name) {
  auto it = payload.find(name);
  if (it == payload.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer() && !it->is_number_unsigned()) {
    return std::chrono::sys_seconds(std::chrono::seconds(it->get<int64_t>()));
  }
  if (it->is_number_unsigned()) {
    uint64_t value = it->get<uint64_t>();
    if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return std::chrono::sys_seconds(std::chrono::seconds(static_cast<int64_t>(value)));
    }
  } else if (it->is_number_float()) {
    double value = std::floor(it->get<double>());
    // Within ±2^62 s the conversion cannot overflow; anything beyond is nonsense anyway.
    if (std::isfinite(value) && std::fabs(value) < 4.6e18) {
      return std::chrono::sys_seconds(std::chrono::seconds(static_cast<int64_t>(value)));
    }
  }
  return Fail(Code::kInvalidInput,
              "JWT claim '" + std::string(name) + "' is not a time in seconds since the epoch");
}

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16 |
                 static_cast<unsigned char>(bytes[i + 1]) << 8 |
                 static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
  } else if (rest == 2) {
    uint32_t n =
        static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

Result<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) {
    return Fail(Code::kInvalidInput, "invalid base64url length " + std::to_string(text.size()) +
                                         " (4n+1 is impossible)");
  }
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    int8_t value = kDecodeTable[static_cast<unsigned char>(text[i])];
    if (value < 0) {
      // The offset, not the character: the text may be part of a credential.
      return Fail(Code::kInvalidInput,
                  text[i] == '=' ? "base64url padding '=' is not allowed"
                                 : "invalid base64url character at offset " + std::to_string(i));
    }
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

Result<JwtClaims> DecodeClaims(std::string_view jwt) {
  size_t first = jwt.find('.');
  size_t second = first == std::string_view::npos ? first : jwt.find('.', first + 1);
  if (second == std::string_view::npos || jwt.find('.', second + 1) != std::string_view::npos) {
    return Fail(Code::kInvalidInput, "not a JWT: expected three dot-separated parts");
  }
  std::string_view header = jwt.substr(0, first);
  std::string_view payload = jwt.substr(first + 1, second - first - 1);
  std::string_view signature = jwt.substr(second + 1);

  if (auto h = DecodeJsonPart(header, "header"); !h) return std::unexpected(h.error());
  auto claims_json = DecodeJsonPart(payload, "payload");
  if (!claims_json) return std::unexpected(claims_json.error());
  // Not verified, but checked for its alphabet: the token goes into an HTTP header verbatim.
  if (auto s = Base64UrlDecode(signature); !s) {
    return Fail(Code::kInvalidInput, "not a JWT: its signature is not base64url");
  }

  JwtClaims claims;
  auto exp = NumericDate(*claims_json, "exp");
  if (!exp) return std::unexpected(exp.error());
  claims.expires_at = *exp;
  auto iat = NumericDate(*claims_json, "iat");
  if (!iat) return std::unexpected(iat.error());
  claims.issued_at = *iat;
  if (auto it = claims_json->find("sun"); it != claims_json->end() && !it->is_null()) {
    if (!it->is_string()) return Fail(Code::kInvalidInput, "JWT claim 'sun' is not a string");
    claims.user = it->get<std::string>();
  }
  return claims;
}

std::string_view TokenText(std::string_view printed) {
  constexpr std::string_view kScontrolPrefix = "SLURM_JWT=";
  std::string_view text = Trim(printed);
  if (text.starts_with(kScontrolPrefix)) text = Trim(text.substr(kScontrolPrefix.size()));
  return text;
}

Result<Secret> MintHs256(const Secret& key, std::string_view user,
                         std::chrono::sys_seconds issued_at, std::chrono::sys_seconds expires_at) {
  if (key.empty()) return Fail(Code::kInvalidInput, "cannot mint a JWT with an empty key");
  if (user.empty()) return Fail(Code::kInvalidInput, "cannot mint a JWT without a user name");

  // ordered_json keeps insertion order; it matches the sorted order libjwt writes.
  nlohmann::ordered_json payload;
  payload["exp"] = expires_at.time_since_epoch().count();
  payload["iat"] = issued_at.time_since_epoch().count();
  payload["sun"] = std::string(user);
  std::string payload_text;
  try {
    payload_text = payload.dump();
  } catch (const nlohmann::json::exception&) {
    return Fail(Code::kInvalidInput, "cannot mint a JWT: the user name is not valid UTF-8");
  }

  std::string signing_input = Base64UrlEncode(kHs256Header) + "." + Base64UrlEncode(payload_text);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  size_t mac_size = 0;
  const std::string& key_bytes = key.Reveal();
  if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key_bytes.data(), key_bytes.size(),
                reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size(),
                mac.data(), mac.size(), &mac_size) == nullptr) {
    return Fail(Code::kInternal, "OpenSSL could not compute HMAC-SHA256");
  }
  std::string_view mac_bytes(reinterpret_cast<const char*>(mac.data()), mac_size);
  return Secret(signing_input + "." + Base64UrlEncode(mac_bytes));
}

std::string FormatUtc(std::chrono::sys_seconds time) {
  auto day = std::chrono::floor<std::chrono::days>(time);
  std::chrono::year_month_day date(day);
  std::chrono::hh_mm_ss clock(time - day);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                static_cast<int>(clock.seconds().count()));
  return text;
}

}  // namespace slurmfleet::auth
