#include "base/url.h"

#include "base/utf8.h"

namespace slurmfleet {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

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

// A byte as a message writes it where it cannot stand itself: "\x0A".
std::string HexEscaped(unsigned char u) {
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 0xf];
}

// The URL as a message quotes it: without its userinfo, each control character as \xNN (a line
// break must not split a diagnostic), in valid UTF-8 (messages end up in JSON).
std::string Shown(std::string_view url) {
  std::string out;
  for (char c : RepairUtf8(WithoutUserinfo(url))) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += HexEscaped(u);
    } else {
      out += c;
    }
  }
  return out;
}

std::string NameOfSpaceOrControl(unsigned char u) {
  switch (u) {
    case ' ':
      return "a space";
    case '\t':
      return "a tab";
    case '\n':
    case '\r':
      return "a line break";
    default:
      return "the control character " + HexEscaped(u);
  }
}

// 1 to 65535, in decimal digits only (no sign, no spaces).
bool IsPort(std::string_view s) {
  if (s.empty() || s.size() > 5) return false;
  unsigned value = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value >= 1 && value <= 65535;
}

}  // namespace

std::string PercentEncode(std::string_view text) {
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

namespace {

// The host and port of a base URL (`shown` quotes the URL for messages, `e_g` an example).
std::optional<UrlProblem> CheckHostAndPort(std::string_view host_port, const std::string& shown,
                                           const std::string& e_g) {
  const UrlProblem no_host{shown + " has no host", "write the host after '//', " + e_g};
  std::optional<std::string_view> port;
  if (host_port.starts_with('[')) {
    const size_t close = host_port.find(']');
    if (close == std::string_view::npos) {
      return UrlProblem{shown + " has no ']' closing its IPv6 address",
                        "write the address in brackets, e.g. http://[::1]:8080/"};
    }
    if (close == 1) return no_host;
    const std::string_view after = host_port.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      return UrlProblem{shown + " has more than a port after its IPv6 address",
                        "write only ':' and a port after the ']', e.g. http://[::1]:8080/"};
    }
    if (!after.empty()) port = after.substr(1);
  } else {
    const size_t colon = host_port.find(':');
    if (colon != std::string_view::npos &&
        host_port.find(':', colon + 1) != std::string_view::npos) {
      if (host_port.find_first_not_of("0123456789abcdefABCDEF:.") == std::string_view::npos) {
        return UrlProblem{shown + " has an IPv6 address without brackets",
                          "write it in brackets, e.g. http://[::1]:8080/"};
      }
      return UrlProblem{shown + " has more than one ':' after its host",
                        "write one port after the host, " + e_g};
    }
    if (host_port.substr(0, colon).empty()) return no_host;
    if (colon != std::string_view::npos) port = host_port.substr(colon + 1);
  }
  if (port && port->empty()) {
    return UrlProblem{shown + " has no port after ':'",
                      "write a port from 1 to 65535, or remove the ':' for the scheme's default"};
  }
  if (port && !IsPort(*port)) {
    return UrlProblem{shown + " has a port that is not a number from 1 to 65535",
                      "write the port as a number from 1 to 65535, or leave it out for the "
                      "scheme's default, " +
                          e_g};
  }
  return std::nullopt;
}

}  // namespace

std::optional<UrlProblem> CheckBaseUrl(std::string_view url, std::string_view example) {
  const std::string shown = "'" + Shown(url) + "'";
  const std::string e_g = "e.g. " + std::string(example);
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return UrlProblem{
          shown + " contains " + NameOfSpaceOrControl(u),
          u == ' ' ? "remove it (a space inside a path is written %20)" : "remove it"};
    }
  }
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos ||
      (url.substr(0, scheme_end) != "http" && url.substr(0, scheme_end) != "https")) {
    // without "://" it is most often a host and port written without the scheme
    return UrlProblem{
        shown + " is not an http:// or https:// URL",
        scheme_end == std::string_view::npos && !url.empty()
            ? "write it with its scheme: http://" + Shown(url) + " or https://" + Shown(url)
            : "write an http:// or https:// URL, " + e_g};
  }

  const std::string_view rest = url.substr(scheme_end + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const size_t at = authority.rfind('@');
  const std::string_view host_port =
      at == std::string_view::npos ? authority : authority.substr(at + 1);
  if (std::optional<UrlProblem> problem = CheckHostAndPort(host_port, shown, e_g)) {
    // `u:pa#ss@host` ends the authority at the '#': what looks like a bad host or port is then
    // most likely a password with a character that must be percent-encoded. After a '/', an '@'
    // may as well be a path's (`http://s:68x0/api@v1`), so both readings are named.
    if (at == std::string_view::npos &&
        rest.find('@', authority.size()) != std::string_view::npos) {
      constexpr std::string_view kEncode = "'/' as %2F, '?' as %3F, '#' as %23";
      if (rest[authority.size()] != '/') {
        return UrlProblem{shown + " has a user name or password holding '/', '?' or '#'",
                          "percent-encode them there: " + std::string(kEncode)};
      }
      return UrlProblem{
          problem->message + ", or a user name or password in it holds '/', '?' or '#'",
          problem->fix + "; in a user name or password, percent-encode " + std::string(kEncode)};
    }
    return problem;
  }
  // Wherever a URL is, it is shown: in logs, in messages, in JENKINS_URL on every agent's
  // command line.
  if (at != std::string_view::npos) {
    return UrlProblem{shown + " holds a user name or password (not shown here)",
                      "remove it and its '@': credentials are given apart from the URL"};
  }
  // `http://admin:20/pw@host/` reads as host "admin", port 20 and path "/pw@host/".
  if (rest.find('@', authority.size()) != std::string_view::npos) {
    return UrlProblem{shown + " has an '@' after its host",
                      "if a user name or password ends there, remove it and its '@' (a '/' in it "
                      "made the rest look like a path); an '@' in the path is written %40"};
  }
  if (url.find('?') != std::string_view::npos) {
    return UrlProblem{shown + " has a query ('?'), which a base URL cannot take",
                      "remove the '?' and all that follows it: paths are appended to this URL"};
  }
  if (url.find('#') != std::string_view::npos) {
    return UrlProblem{shown + " has a fragment ('#'), which is never sent to the server",
                      "remove the '#' and all that follows it"};
  }
  return std::nullopt;
}

}  // namespace slurmfleet
