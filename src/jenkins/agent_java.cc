#include "jenkins/agent_java.h"

#include <charconv>

namespace slurmfleet::jenkins {
namespace {

// The next dot-separated number of `text`, advancing past it; -1 when there is none.
long NextNumber(std::string_view& text) {
  long n = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n < 0) return -1;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  if (!text.empty() && text.front() == '.') text.remove_prefix(1);
  return n;
}

}  // namespace

int MinimumAgentJava(std::string_view version) {
  const long major = NextNumber(version);
  const long minor = major < 0 ? -1 : NextNumber(version);
  if (major < 0 || minor < 0) return kAgentJavaFloor;
  return major > 2 || (major == 2 && minor >= 545) ? 21 : kAgentJavaFloor;
}

}  // namespace slurmfleet::jenkins
