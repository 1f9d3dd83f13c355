#include "launch/java_check.h"

namespace slurmfleet::launch {
namespace {

// What the messages say after the Java's name, and the fixes for a Java without a readable
// version and for one too old. Shell text inside double quotes.
struct SiteText {
  std::string where;
  std::string fix_unreadable;
  std::string fix_older;
};

SiteText TextFor(JavaSite site, int minimum) {
  const std::string min = std::to_string(minimum);
  switch (site) {
    case JavaSite::kApptainer:
      return {
          "in image $java_image on $SLURMD_NODENAME",
          "set the template's apptainer.javaPath to the image's Java",
          "set the template's apptainer.javaPath, or use an image with Java " + min + " or newer"};
    case JavaSite::kPyxis:
      return {"in the container image on $SLURMD_NODENAME",
              "the image must hold Java at that path (the jenkins/inbound-agent layout): set "
              "pyxis.containerImage",
              "use a pyxis.containerImage with Java " + min + " or newer"};
    case JavaSite::kNode:
      break;
  }
  return {"on $SLURMD_NODENAME", "set the template's javaPath, or load Java in its setupScript",
          "set the template's javaPath, or load a newer Java in its setupScript"};
}

}  // namespace

std::string JavaVersionCheck(const JavaToCheck& java, int minimum) {
  const std::string min = std::to_string(minimum);
  const SiteText text = TextFor(java.site, minimum);
  std::string s;
  s += "# agent.jar needs Java " + min + " or newer: say so here, not as a JVM error later.\n";
  s += "java_cmd=" + java.java + "\n";
  if (java.site == JavaSite::kApptainer) {
    s += "java_image=" + java.image + "\n";
    s += "java_says=\"$(" + java.runner + " \"$java_cmd\" -version 2>&1)\" || true\n";
  } else {
    s += "java_says=\"$(\"$java_cmd\" -version 2>&1)\" || true\n";
  }
  // the version in `... version "21.0.5" ...`, after any "Picked up ..." line
  s += "java_version=\n";
  s += "java_rest=${java_says#*\\ version\\ \\\"}\n";
  s += "if [ \"$java_rest\" != \"$java_says\" ]; then\n";
  s += "  java_version=${java_rest%%\\\"*}\n";
  s += "fi\n";
  s += "java_major=${java_version%%[!0-9]*}\n";
  s += "if [ \"$java_major\" = 1 ]; then  # \"1.8.0_392\" is Java 8\n";
  s += "  java_major=${java_version#1.}\n";
  s += "  java_major=${java_major%%[!0-9]*}\n";
  s += "fi\n";
  s += "if [ -z \"$java_major\" ]; then\n";
  s += "  java_nl=\"\n\"\n";
  s += "  java_first=${java_says%%\"$java_nl\"*}\n";
  s += "  echo \"slurmfleet: cannot tell the version of Java \\\"$java_cmd\\\" " + text.where +
       " \\\n";
  s += "($java_first): " + text.fix_unreadable + "\" >&2\n";
  s += "  exit 1\n";
  s += "fi\n";
  s += "if [ \"$java_major\" -lt " + min + " ]; then\n";
  s += "  echo \"slurmfleet: \\\"$java_cmd\\\" " + text.where + " is Java $java_version; \\\n";
  s += "the Jenkins agent needs Java " + min + " or newer: " + text.fix_older + "\" >&2\n";
  s += "  exit 1\n";
  s += "fi\n\n";
  return s;
}

}  // namespace slurmfleet::launch
