// JavaVersionCheck: the lines of an agent script that end the job, with a message in its output,
// when the Java that would run agent.jar is missing or older than `minimum`
// (research/jenkins/CONTRACT.md §8). Without them a missing Java shows only as "command not
// found" at the agent step, and a too-old one as a JVM error once the agent starts. The Java may
// be the node's, an Apptainer image's (asked through `apptainer exec`) or, inside a Pyxis
// container, the image's. Pure function; no I/O.
#pragma once

#include <string>
#include <string_view>

namespace slurmfleet::launch {

// Where the checked Java runs; the messages name it and the template field that fixes it.
enum class JavaSite {
  kNode,       // on the compute node: javaPath, setupScript
  kApptainer,  // in the Apptainer image: apptainer.javaPath, apptainer.image
  kPyxis,      // in the Pyxis container the lines run in: pyxis.containerImage
};

// The Java to check. Every string is shell text, already quoted where it must be.
struct JavaToCheck {
  std::string java;  // the Java command exactly as the agent step runs it
  JavaSite site = JavaSite::kNode;
  // kApptainer: the image, for the messages, and the words that run a command in it as the agent
  // step does (`apptainer exec --bind ... IMAGE`), so that a Java bound in from the node is found
  std::string image = {};
  std::string runner = {};
};

// The lines are POSIX sh (bash and a container's /bin/sh alike) and set the variables java_cmd,
// java_image, java_says, java_rest, java_version, java_major, java_nl and java_first. For kPyxis
// they hold no single quote, so that they can be put inside a single-quoted string (`java` must
// not hold one either).
std::string JavaVersionCheck(const JavaToCheck& java, int minimum);

}  // namespace slurmfleet::launch
