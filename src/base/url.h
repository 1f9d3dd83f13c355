// URL text as slurmfleet writes it: query values it builds, and URLs it quotes in messages.
#pragma once

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

}  // namespace slurmfleet
