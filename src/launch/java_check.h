// JavaVersionCheck: the lines of a native agent script that end the job, with a message in its
// output, when the Java that would run agent.jar is missing or older than `minimum`
// (research/jenkins/CONTRACT.md §8). Without them a missing Java shows only as "command not
// found" at the agent step, and a too-old one as a JVM error once the jar is downloaded.
// Pure function; no I/O.
#pragma once

#include <string>
#include <string_view>

namespace slurmfleet::launch {

// `java_quoted`: the Java command exactly as the script runs it, already shell-quoted.
// The lines need bash and set the variables java_cmd, java_says, java_version and java_major.
std::string JavaVersionCheck(std::string_view java_quoted, int minimum);

}  // namespace slurmfleet::launch
