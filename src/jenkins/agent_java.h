// MinimumAgentJava: the oldest Java an inbound agent may run on for a given controller
// (research/jenkins/CONTRACT.md §8). Remoting 3299 and later need Java 17; from Jenkins 2.545 on
// (weekly; the LTS lines after 2.541) every Jenkins component, agents included, needs Java 21.
// Pure function; no I/O.
#pragma once

#include <string_view>

namespace slurmfleet::jenkins {

inline constexpr int kAgentJavaFloor = 17;

// `version` is the controller's X-Jenkins header ("2.541.1", "2.545"). An empty or unreadable
// version gives the floor: a wrong stricter answer would refuse agents that work.
int MinimumAgentJava(std::string_view version);

}  // namespace slurmfleet::jenkins
