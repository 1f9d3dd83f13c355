// JobFilter: which jobs of a full job list a caller needs whole. A daemon on a cluster in use
// tracks a few of its own jobs among thousands of other users' (slurmrestd sends every job, about
// 8 KB each, with no field filter), so a list decoded with a filter stops reading a job as soon as
// its comment and id show it is not wanted, and leaves it out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slurmfleet::slurm {

struct JobFilter {
  std::string comment_prefix;  // jobs whose comment starts with this are wanted ("" : none)
  std::vector<uint32_t> ids;   // and these jobs, whatever their comment; sorted
};

// Whether a comment carries the filter's tag.
inline bool Tagged(const JobFilter& filter, std::string_view comment) {
  return !filter.comment_prefix.empty() && comment.starts_with(filter.comment_prefix);
}

// Whether the filter wants a job by its id.
inline bool Tracks(const JobFilter& filter, uint32_t id) {
  return std::binary_search(filter.ids.begin(), filter.ids.end(), id);
}

// Whether a job with this id and comment is wanted.
inline bool Wants(const JobFilter& filter, uint32_t id, std::string_view comment) {
  return Tagged(filter, comment) || Tracks(filter, id);
}

}  // namespace slurmfleet::slurm
