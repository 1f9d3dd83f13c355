// Agent names and the ownership tag. An agent's name is at once its Jenkins node name, its Slurm
// job name and a directory name on the compute node, so the names it is built from are held to
// the intersection of those rules. Pure functions; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace slurmfleet::launch {

inline constexpr size_t kMaxNameLength = 63;
// An agent name is also its submission key, which a job's tag holds: at most 128 characters.
inline constexpr size_t kMaxAgentNameLength = 128;
// The most a cloud's and a template's names may take together: an agent name adds three '-', the
// Unix milliseconds (13 digits until 2286) and a sequence number (up to 20 digits).
inline constexpr size_t kMaxCloudAndTemplateLength = kMaxAgentNameLength - 3 - 13 - 20;

// A cloud or template name: 1 to 63 characters from [A-Za-z0-9._-], starting with a letter or
// digit and not ending with '.'. Safe as a Jenkins node name (Jenkins.checkGoodName), a Slurm job
// name, a path component and a bare shell word. kInvalidInput naming `what` ("cloud name",
// "template name") and the first offending character otherwise.
Status ValidateName(std::string_view what, std::string_view name);

// kInvalidInput when a cloud's and a template's names are too long together to make agent names.
Status ValidateNamesTogether(std::string_view cloud, std::string_view template_name);

// "{cloud}-{template}-{timestamp}-{sequence}", with the timestamp in Unix milliseconds.
// kInvalidInput when the cloud or template name is invalid, or both together are longer than
// kMaxCloudAndTemplateLength.
Result<std::string> MakeAgentName(std::string_view cloud, std::string_view template_name,
                                  std::chrono::system_clock::time_point at, uint64_t sequence);

// An agent name as it arrives from elsewhere (a CLI flag, the state file): the same character
// rules as ValidateName, up to kMaxAgentNameLength characters, as MakeAgentName makes them.
// kInvalidInput naming the limit otherwise.
Status ValidateAgentName(std::string_view name);

// What every job we submit carries in its comment, so we can tell our jobs from anybody else's:
// "slurmfleet:agent cloud=<cloud> template=<template>".
std::string OwnershipTag(std::string_view cloud, std::string_view template_name);

struct Ownership {
  std::string cloud;
  std::string template_name;
  bool operator==(const Ownership&) const = default;
};

// The inverse of OwnershipTag; nullopt for any comment that is not exactly such a tag.
std::optional<Ownership> ParseOwnershipTag(std::string_view comment);

}  // namespace slurmfleet::launch
