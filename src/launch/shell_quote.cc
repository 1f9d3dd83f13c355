#include "launch/shell_quote.h"

namespace slurmfleet::launch {
namespace {

bool IsSafe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '@' || c == '%' || c == '+' || c == ':' || c == ',' || c == '.' || c == '/' ||
         c == '-';
}

}  // namespace

std::string ShellQuote(std::string_view s) {
  bool safe = !s.empty();
  for (char c : s) safe = safe && IsSafe(c);
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

}  // namespace slurmfleet::launch
