#include "slurm/output_path.h"

#include <algorithm>
#include <cctype>

namespace slurmfleet::slurm {
namespace {

constexpr int kMaxWidth = 10;  // Slurm pads to at most 10 digits

std::string Padded(uint32_t n, int width) {
  std::string digits = std::to_string(n);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

}  // namespace

std::string CompleteOutputPath(std::string_view path, const JobInfo& job) {
  if (path.find('%') == std::string_view::npos || path.find('\\') != std::string_view::npos) {
    return std::string(path);
  }
  std::string out;
  out.reserve(path.size() + 16);
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    size_t spec = i + 1;
    int width = 0;
    while (spec < path.size() && std::isdigit(static_cast<unsigned char>(path[spec]))) {
      width = std::min(kMaxWidth, width * 10 + (path[spec] - '0'));
      ++spec;
    }
    if (spec == path.size()) {
      out.append(path.substr(i));
      break;
    }
    switch (path[spec]) {
      case 'N':
        if (job.batch_host.empty()) {
          out.append(path.substr(i, spec - i + 1));
        } else {
          out += job.batch_host;
        }
        break;
      case 'n':
      case 't':
        out += Padded(0, width);
        break;
      case 's':
        out += "batch";
        break;
      case 'J':
        out += Padded(job.job_id, width);
        break;
      default:  // filled in by slurmctld already, or a literal '%' from "%%"
        out.append(path.substr(i, spec - i + 1));
        break;
    }
    i = spec;
  }
  return out;
}

}  // namespace slurmfleet::slurm
