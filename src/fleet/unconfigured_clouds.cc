#include "fleet/unconfigured_clouds.h"

#include <fmt/format.h>

#include <map>

namespace slurmfleet::fleet {
namespace {

constexpr size_t kJobsNamed = 20;

}  // namespace

std::vector<UnconfiguredCloud> UnconfiguredClouds(const std::vector<store::Submission>& live,
                                                  const std::set<std::string>& configured) {
  std::map<std::string, UnconfiguredCloud> by_cloud;
  for (const store::Submission& s : live) {
    if (store::IsTerminal(s.phase) || configured.contains(s.cloud)) continue;
    UnconfiguredCloud& c = by_cloud[s.cloud];
    c.cloud = s.cloud;
    if (s.job_id) {
      c.job_ids.push_back(*s.job_id);
    } else {
      ++c.unsubmitted;
    }
  }
  std::vector<UnconfiguredCloud> out;
  for (auto& [name, cloud] : by_cloud) out.push_back(std::move(cloud));
  return out;
}

std::string DescribeUnconfiguredCloud(const UnconfiguredCloud& cloud) {
  std::string jobs;
  for (size_t i = 0; i < cloud.job_ids.size() && i < kJobsNamed; ++i) {
    jobs += (jobs.empty() ? "" : " ") + std::to_string(cloud.job_ids[i]);
  }
  if (cloud.job_ids.size() > kJobsNamed) {
    jobs += fmt::format(" and {} more", cloud.job_ids.size() - kJobsNamed);
  }
  std::string held;
  if (!cloud.job_ids.empty())
    held = fmt::format("{} Slurm job(s) ({})", cloud.job_ids.size(), jobs);
  if (cloud.unsubmitted > 0) {
    held += fmt::format("{}{} submission(s) without a job id yet", held.empty() ? "" : " and ",
                        cloud.unsubmitted);
  }
  return fmt::format(
      "cloud {} is not in the configuration, but the state holds {} of it: nothing tracks or "
      "cancels them now. Put the cloud back until they have ended, or cancel them on that "
      "cluster{}",
      cloud.cloud, held,
      cloud.job_ids.empty() || cloud.job_ids.size() > kJobsNamed ? "" : " (scancel " + jobs + ")");
}

}  // namespace slurmfleet::fleet
