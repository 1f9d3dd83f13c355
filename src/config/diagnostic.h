// One problem found in a configuration, located precisely enough to fix without searching:
// file:line:column, the key path, what is wrong, and how to fix it. `validate` prints every one.
#pragma once

#include <string>
#include <vector>

namespace slurmfleet::config {

struct Diagnostic {
  std::string source;   // the file name, or "environment SLURMFLEET_X" / "--set a.b=c"
  int line = 0;         // 1-based; 0 when the value did not come from a file
  int column = 0;       // 1-based; 0 when unknown
  std::string path;     // "jenkins.clouds[0].slurm.jobTemplates[1].cpusPerTask"
  std::string message;  // what is wrong, no trailing period
  std::string fix;      // what to do about it; may be empty when the message says it

  bool operator==(const Diagnostic&) const = default;
};

// "slurmfleet.yaml:12:7: jenkins.clouds[0].slurm.maxAgents: expected a whole number, got 'ten'
// (fix: write a number such as 10)". Without a line: "environment SLURMFLEET_X: path: ...".
std::string FormatDiagnostic(const Diagnostic& d);

}  // namespace slurmfleet::config
