// UnconfiguredClouds: the live submissions (agents' jobs and batch jobs alike) of clouds that the
// configuration no longer names. No engine tracks or cancels them any more, so `serve` says at
// start which jobs those are and what to do, instead of leaving them unmentioned. Pure function;
// no I/O.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "store/submission.h"

namespace slurmfleet::fleet {

struct UnconfiguredCloud {
  std::string cloud;
  std::vector<uint32_t> job_ids;  // submitted, in the order given
  size_t unsubmitted = 0;         // intents without a job id (never sent, or sent and lost)

  bool operator==(const UnconfiguredCloud&) const = default;
};

// The clouds of the non-terminal submissions in `live` that are not in `configured`, by name.
std::vector<UnconfiguredCloud> UnconfiguredClouds(const std::vector<store::Submission>& live,
                                                  const std::set<std::string>& configured);

// One line for the log: the cloud, its jobs (at most 20 named), and the two ways out.
std::string DescribeUnconfiguredCloud(const UnconfiguredCloud& cloud);

}  // namespace slurmfleet::fleet
