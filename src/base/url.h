// URL text as slurmfleet writes it: query values it builds, and URLs it quotes in messages.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace slurmfleet {

// RFC 3986 percent-encoding of everything but the unreserved characters (letters, digits, '-',
// '.', '_', '~'): right for a query value, a form field and a path segment alike.
std::string PercentEncode(std::string_view text);

// `url` with its user name and password, if any, replaced by "***": "http://***@host:8080/", or
// "***@host:8080/" for one written without a scheme. For every message or log line that quotes a
// URL a person gave: a password there must not be shown.
std::string WithoutUserinfo(std::string_view url);

// What is wrong with a URL, for a message ("'http:///' has no host") and its fix ("write the host
// after '//', e.g. http://slurmrestd:6820"). The message quotes the URL as WithoutUserinfo shows
// it, with control characters as \xNN and invalid UTF-8 repaired, and never quotes a part of it
// on its own: an unencoded '/', '?' or '#' in a password makes the parts uncertain.
struct UrlProblem {
  std::string message;
  std::string fix;
};

// The first problem that keeps `url` from being the base URL of an HTTP service, or nullopt when
// it can be one. The one shared check of every base URL a person gives (the configuration's,
// the CLI's --url and --daemon, the Slurm and Jenkins clients'): http:// or https://, a host (a
// name, an IPv4 address or an IPv6 address in brackets), an optional port from 1 to 65535 and an
// optional path. Refused: whitespace or a control character anywhere, no host, an empty or bad
// port, a query and a fragment (paths are appended to a base URL, and a fragment is never sent),
// a user name or password, and an '@' anywhere (after a password holding '/', what follows looks
// like a path). `example` is a URL of the kind wanted, quoted in the fix
// ("http://slurmrestd:6820").
std::optional<UrlProblem> CheckBaseUrl(std::string_view url, std::string_view example);

}  // namespace slurmfleet
