#include "cli/job_view.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "slurm/job_outcome.h"

namespace slurmfleet::cli {
namespace {

nlohmann::json Time(const std::optional<slurm::Seconds>& t) {
  if (!t) return nullptr;
  // 1970 to 9999 only: outside it the count of seconds is shown as Slurm sent it
  constexpr int64_t kYear10000 = 253402300800;
  const int64_t seconds = t->time_since_epoch().count();
  if (seconds < 0 || seconds >= kYear10000) return seconds;
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", *t);
}

}  // namespace

nlohmann::json JobToJson(const slurm::JobInfo& j) {
  nlohmann::json out = {
      {"job_id", j.job_id},
      {"sluid", j.sluid},
      {"name", j.name},
      {"user", j.user_name},
      {"account", j.account},
      {"partition", j.partition},
      {"comment", j.comment},
      {"state", slurm::JobStateString(j.state)},
      {"state_raw", j.state.raw},
      {"state_reason", j.state_reason},
      {"state_description", j.state_description},
      {"nodes", j.nodes},
      {"exit_code",
       {{"status", j.exit_code.status},
        {"return_code",
         j.exit_code.return_code ? nlohmann::json(*j.exit_code.return_code) : nullptr},
        {"signal", j.exit_code.signal ? nlohmann::json(*j.exit_code.signal) : nullptr},
        {"signal_name", j.exit_code.signal_name}}},
      {"submit_time", Time(j.submit_time)},
      {"start_time", Time(j.start_time)},
      {"end_time", Time(j.end_time)},
      {"time_limit_minutes",
       j.time_limit_minutes ? nlohmann::json(*j.time_limit_minutes) : nullptr},
      {"working_directory", j.current_working_directory},
      {"stdout", j.standard_output},
      {"stderr", j.standard_error},
      {"batch_host", j.batch_host},
      {"outcome", slurm::DescribeOutcome(j)},
  };
  if (j.het_job_id) {
    out["het_job_id"] = *j.het_job_id;
    out["het_job_offset"] = j.het_job_offset ? nlohmann::json(*j.het_job_offset) : nullptr;
  }
  return out;
}

std::string JobHeaderLine() {
  return fmt::format("{:<8} {:<15} {:<22} {:<16} {:<10} {:<24} {}", "ID", "SLUID", "STATE",
                     "REASON", "USER", "NAME", "NODES");
}

std::string JobLine(const slurm::JobInfo& j) {
  std::string id = std::to_string(j.job_id);
  if (j.het_job_offset) id += "+" + std::to_string(*j.het_job_offset);
  return fmt::format("{:<8} {:<15} {:<22} {:<16} {:<10} {:<24} {}", id,
                     j.sluid.empty() ? "-" : j.sluid, slurm::JobStateString(j.state),
                     j.state_reason, j.user_name, j.name, j.nodes);
}

bool IsFinal(const slurm::JobState& s) {
  using slurm::BaseState;
  if (s.base == BaseState::kPending || s.base == BaseState::kRunning ||
      s.base == BaseState::kSuspended || s.base == BaseState::kUnknown) {
    return false;
  }
  return !s.Has(slurm::kFlagCompleting) && !s.Has(slurm::kFlagStageOut);
}

}  // namespace slurmfleet::cli
