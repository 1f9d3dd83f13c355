// Puts the stand-in agent (standin-java, as `java`) and a dummy agent.jar into the testbed's
// rootfs, where Slurm jobs run them as a template's javaPath/jarPath. Test-only.
#pragma once

#include <string>

namespace slurmfleet::standin {

// Inside the testbed's rootfs, as jobs see it.
inline constexpr const char* kStandinAgentDir = "/opt/slurmfleet-standin";

// Copies into `<testbed_root>/opt/slurmfleet-standin`. A file already identical is left alone:
// another run's agents may be executing it right now, and rewriting a running script breaks it.
void InstallStandinAgent(const std::string& testbed_root);

}  // namespace slurmfleet::standin
