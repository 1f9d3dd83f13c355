#include "base/url.h"

namespace slurmfleet {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 3986: a letter, then letters, digits, '+', '-' and '.'.
bool IsScheme(std::string_view s) {
  if (s.empty() || !IsAlpha(s[0])) return false;
  for (char c : s) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      const auto u = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  return out;
}

std::string WithoutUserinfo(std::string_view url) {
  const size_t scheme_end = url.find("://");
  const size_t start = scheme_end != std::string_view::npos && IsScheme(url.substr(0, scheme_end))
                           ? scheme_end + 3
                           : 0;
  // The last '@', not the first one of the authority: a password holding an unencoded '/', '?'
  // or '#' ends the authority early, and the rest of it must stay hidden too.
  const size_t at = url.rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

}  // namespace slurmfleet
