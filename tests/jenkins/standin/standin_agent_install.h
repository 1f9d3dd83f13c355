// Puts the stand-in agent (standin-java, as `java`) and a dummy agent.jar into the testbed's
// rootfs, where Slurm jobs run them as a template's javaPath/jarPath; and builds an Apptainer
// image that holds them, for templates that launch agents with Apptainer. Test-only.
#pragma once

#include <string>

namespace slurmfleet::standin {

// Inside the testbed's rootfs, as jobs see it.
inline constexpr const char* kStandinAgentDir = "/opt/slurmfleet-standin";
// The image BuildStandinAgentImage makes, and the agent's directory inside it (only there).
inline constexpr const char* kStandinAgentImage = "/opt/slurmfleet-standin/agent.sif";
inline constexpr const char* kImageAgentDir = "/opt/agent-in-image";

// Copies into `<testbed_root>/opt/slurmfleet-standin`. A file already identical is left alone:
// another run's agents may be executing it right now, and rewriting a running script breaks it.
void InstallStandinAgent(const std::string& testbed_root);

// Builds kStandinAgentImage from the installed agent, inside the testbed (`testbed_script exec`),
// with the rootfs's apptainer. Empty when built; otherwise what failed, with the build's output.
std::string BuildStandinAgentImage(const std::string& testbed_root,
                                   const std::string& testbed_script);

}  // namespace slurmfleet::standin
