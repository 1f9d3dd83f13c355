// "Did you mean" for misspelt keys: the known name closest to what the user typed.
// Pure functions; safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace slurmfleet::spec {

// Edit distance (insertions, deletions, substitutions, and swaps of two adjacent characters),
// comparing case-insensitively so `cpuspertask` is one step from nothing but `cpusPerTask`.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, or "" when none is close enough to be a plausible typo:
// within a third of the typed length (at least 1, at most 3 edits), or equal ignoring case and
// separators (`cpus_per_task` suggests `cpusPerTask`). Ties go to the earlier candidate.
std::string Suggest(std::string_view typed, std::span<const std::string_view> candidates);

// " (did you mean 'x'?)" for a suggestion, "" for none: append it to an "unknown key" message.
std::string DidYouMean(std::string_view typed, std::span<const std::string_view> candidates);

}  // namespace slurmfleet::spec
