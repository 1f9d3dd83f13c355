#include "slurm/job.h"

#include <array>
#include <utility>

namespace slurmfleet::slurm {
namespace {

constexpr std::array<std::pair<std::string_view, BaseState>, 12> kBaseStates{{
    {"PENDING", BaseState::kPending},
    {"RUNNING", BaseState::kRunning},
    {"SUSPENDED", BaseState::kSuspended},
    {"COMPLETED", BaseState::kCompleted},
    {"CANCELLED", BaseState::kCancelled},
    {"FAILED", BaseState::kFailed},
    {"TIMEOUT", BaseState::kTimeout},
    {"NODE_FAIL", BaseState::kNodeFail},
    {"PREEMPTED", BaseState::kPreempted},
    {"BOOT_FAIL", BaseState::kBootFail},
    {"DEADLINE", BaseState::kDeadline},
    {"OUT_OF_MEMORY", BaseState::kOutOfMemory},
}};

constexpr std::array<std::pair<std::string_view, JobFlag>, 16> kFlags{{
    {"LAUNCH_FAILED", kFlagLaunchFailed},
    {"REQUEUED", kFlagRequeued},
    {"REQUEUE_HOLD", kFlagRequeueHold},
    {"SPECIAL_EXIT", kFlagSpecialExit},
    {"RESIZING", kFlagResizing},
    {"CONFIGURING", kFlagConfiguring},
    {"COMPLETING", kFlagCompleting},
    {"STOPPED", kFlagStopped},
    {"RECONFIG_FAIL", kFlagReconfigFail},
    {"POWER_UP_NODE", kFlagPowerUpNode},
    {"REVOKED", kFlagRevoked},
    {"REQUEUE_FED", kFlagRequeueFed},
    {"RESV_DEL_HOLD", kFlagResvDelHold},
    {"SIGNALING", kFlagSignaling},
    {"STAGE_OUT", kFlagStageOut},
    {"EXPEDITING", kFlagExpediting},
}};

}  // namespace

JobState ParseJobState(const std::vector<std::string>& names) {
  JobState state;
  state.raw = names;
  for (const std::string& name : names) {
    bool known = false;
    for (const auto& [text, base] : kBaseStates) {
      if (name == text) {
        state.base = base;
        known = true;
        break;
      }
    }
    if (known) continue;
    for (const auto& [text, flag] : kFlags) {
      if (name == text) {
        state.flags |= flag;
        break;
      }
    }
  }
  return state;
}

std::string_view BaseStateName(BaseState state) {
  for (const auto& [text, base] : kBaseStates) {
    if (base == state) return text;
  }
  return "UNKNOWN";
}

std::string JobStateString(const JobState& state) {
  if (state.base == BaseState::kUnknown && !state.raw.empty()) {
    std::string out;
    for (const std::string& name : state.raw) out += (out.empty() ? "" : "+") + name;
    return out;
  }
  std::string out(BaseStateName(state.base));
  for (const auto& [text, flag] : kFlags) {
    if (state.Has(flag)) out += "+" + std::string(text);
  }
  return out;
}

std::string JobRef::PathSegment(bool sluid_capable) const {
  if (sluid_capable && !sluid.empty()) return sluid;
  return std::to_string(id);
}

std::string JobRef::ToString() const { return sluid.empty() ? std::to_string(id) : sluid; }

std::optional<uint64_t> WholeNumberIn(const nlohmann::json& v, const WholeNumberRange& range) {
  // parsed, a non-negative integer is unsigned and a negative one signed; built in code, either
  std::optional<uint64_t> n;
  if (v.is_number_unsigned()) {
    n = v.get<uint64_t>();
  } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    n = static_cast<uint64_t>(v.get<int64_t>());
  }
  if (!n || *n < range.min || *n > range.max) return std::nullopt;
  return n;
}

std::string ExpectedWholeNumber(const WholeNumberRange& range) {
  std::string out = "expected a whole number ";
  if (!range.unit.empty()) out += "of " + std::string(range.unit) + " ";
  return out + "from " + std::to_string(range.min) + " to " + std::to_string(range.max);
}

}  // namespace slurmfleet::slurm
