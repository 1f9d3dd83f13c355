#include "store/submission.h"

#include <array>

namespace slurmfleet::store {
namespace {

struct PhaseRow {
  Phase phase;
  std::string_view name;
  bool terminal;
};

// One row per phase, in enum order. The names are persisted: never rename one.
constexpr std::array<PhaseRow, 11> kPhases = {{
    {Phase::kIntent, "intent", false},
    {Phase::kSubmitting, "submitting", false},
    {Phase::kPending, "pending", false},
    {Phase::kStarting, "starting", false},
    {Phase::kRunning, "running", false},
    {Phase::kSuspended, "suspended", false},
    {Phase::kCompleting, "completing", false},
    {Phase::kSucceeded, "succeeded", true},
    {Phase::kFailed, "failed", true},
    {Phase::kCancelled, "cancelled", true},
    {Phase::kLost, "lost", true},
}};

const PhaseRow* Find(Phase phase) {
  for (const PhaseRow& row : kPhases) {
    if (row.phase == phase) return &row;
  }
  return nullptr;
}

}  // namespace

std::string_view PhaseName(Phase phase) {
  const PhaseRow* row = Find(phase);
  return row != nullptr ? row->name : "unknown";
}

std::optional<Phase> PhaseFromName(std::string_view name) {
  for (const PhaseRow& row : kPhases) {
    if (row.name == name) return row.phase;
  }
  return std::nullopt;
}

bool IsTerminal(Phase phase) {
  const PhaseRow* row = Find(phase);
  return row != nullptr && row->terminal;
}

}  // namespace slurmfleet::store
