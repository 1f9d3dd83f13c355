#include "config/diagnostic.h"

namespace slurmfleet::config {

std::string FormatDiagnostic(const Diagnostic& d) {
  std::string out = d.source;
  if (d.line > 0) {
    out += ":" + std::to_string(d.line);
    if (d.column > 0) out += ":" + std::to_string(d.column);
  }
  out += ": ";
  if (!d.path.empty()) out += d.path + ": ";
  out += d.message;
  if (!d.fix.empty()) out += " (fix: " + d.fix + ")";
  return out;
}

}  // namespace slurmfleet::config
