#include "launch/java_check.h"

namespace slurmfleet::launch {

std::string JavaVersionCheck(std::string_view java_quoted, int minimum) {
  const std::string min = std::to_string(minimum);
  std::string s;
  s += "# agent.jar needs Java " + min + " or newer: say so here, not as a JVM error later.\n";
  s += "java_cmd=" + std::string(java_quoted) + "\n";
  s += "java_says=\"$(\"$java_cmd\" -version 2>&1)\" || true\n";
  s += "java_version=\n";
  s += "if [[ $java_says =~ \\ version\\ \\\"([^\\\"]*)\\\" ]]; then\n";
  s += "  java_version=\"${BASH_REMATCH[1]}\"\n";
  s += "fi\n";
  s += "java_major=\"${java_version%%[!0-9]*}\"\n";
  s += "if [ \"$java_major\" = 1 ]; then  # \"1.8.0_392\" is Java 8\n";
  s += "  java_major=\"${java_version#1.}\"\n";
  s += "  java_major=\"${java_major%%[!0-9]*}\"\n";
  s += "fi\n";
  s += "if [ -z \"$java_major\" ]; then\n";
  s += "  echo \"slurmfleet: cannot tell the version of Java '$java_cmd' on $SLURMD_NODENAME \\\n";
  s += "(${java_says%%$'\\n'*}): set the template's javaPath, or load Java in its setupScript\" "
       ">&2\n";
  s += "  exit 1\n";
  s += "fi\n";
  s += "if [ \"$java_major\" -lt " + min + " ]; then\n";
  s += "  echo \"slurmfleet: '$java_cmd' on $SLURMD_NODENAME is Java $java_version; the Jenkins "
       "\\\n";
  s += "agent needs Java " + min +
       " or newer: set the template's javaPath, or load a newer Java in its setupScript\" >&2\n";
  s += "  exit 1\n";
  s += "fi\n\n";
  return s;
}

}  // namespace slurmfleet::launch
