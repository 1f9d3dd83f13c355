// The tag that marks a Slurm job as ours: "slurmfleet:<instance>:<key>" at the start of the job's
// comment (a user comment follows after a space). It survives daemon restarts, so the job can be
// found again by its submission key after a lost submit response, and so garbage collection can
// tell our jobs from everyone else's. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace slurmfleet::fleet {

struct JobTag {
  std::string
      instance;     // which slurmfleet installation; two instances never touch each other's jobs
  std::string key;  // the submission key
  bool operator==(const JobTag&) const = default;
};

// kInvalidInput when instance or key contain characters other than [A-Za-z0-9._-] or are empty.
Status ValidateTagPart(std::string_view what, std::string_view value);

// "slurmfleet:<instance>:": how every comment TagComment writes for `instance` starts.
std::string TagPrefix(std::string_view instance);

// "slurmfleet:<instance>:<key>", then " " + user_comment when there is one.
std::string TagComment(const JobTag& tag, std::string_view user_comment);

// nullopt for a comment that does not start with a well-formed tag.
std::optional<JobTag> ParseTag(std::string_view comment);

// ParseTag without copies, for a caller that reads thousands of comments a pass: the parts are
// views into `comment`.
struct JobTagView {
  std::string_view instance;
  std::string_view key;
};
std::optional<JobTagView> ParseTagView(std::string_view comment);

}  // namespace slurmfleet::fleet
